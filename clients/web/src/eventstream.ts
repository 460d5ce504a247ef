// The event stream format of server-sent events, parsed from the bytes of a `fetch` body:
// continuous mode reads `GET /v1/changes` as a stream through fetch, since an EventSource
// cannot send the Authorization header. Pure, so it is tested under Node.

/** Server-sent events (the WHATWG event stream format) from the bytes of a `fetch` body. */
export class EventStreamParser {
  private decoder = new TextDecoder();
  private buffer = "";
  private type = "";
  private data: string[] = [];
  /** The last event's id (`Last-Event-ID`). */
  lastEventID = "";

  /** The events completed by `chunk`; `end` flushes the decoder (an unfinished event is dropped). */
  push(chunk: Uint8Array | undefined, end = false): { type: string; data: string; id: string }[] {
    this.buffer += this.decoder.decode(chunk ?? new Uint8Array(), { stream: !end });
    const events: { type: string; data: string; id: string }[] = [];
    for (;;) {
      const match = /\r\n|\r|\n/.exec(this.buffer);
      // A lone \r at the end may be the first half of \r\n: wait for the next chunk.
      if (!match || (match[0] === "\r" && match.index === this.buffer.length - 1 && !end)) break;
      const line = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      if (line === "") {
        if (this.data.length) events.push({ type: this.type || "message", data: this.data.join("\n"), id: this.lastEventID });
        this.type = "";
        this.data = [];
        continue;
      }
      if (line.startsWith(":")) continue;
      const colon = line.indexOf(":");
      const field = colon < 0 ? line : line.slice(0, colon);
      let value = colon < 0 ? "" : line.slice(colon + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "event") this.type = value;
      else if (field === "data") this.data.push(value);
      else if (field === "id" && !value.includes("\0")) this.lastEventID = value;
    }
    return events;
  }
}

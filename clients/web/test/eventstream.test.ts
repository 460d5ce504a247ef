// The event stream parser continuous mode reads `GET /v1/changes` with: events split
// anywhere across chunks, every line ending, comments (the server's heartbeat), ids.
import { test } from "node:test";
import assert from "node:assert/strict";
import { EventStreamParser } from "../src/eventstream.js";

const bytes = (s: string) => new TextEncoder().encode(s);

test("Ferry's stream: retry, a changes event with its cursor as id, a heartbeat, another event", () => {
  const p = new EventStreamParser();
  const stream = 'retry: 1000\n\nevent: changes\nid: c1\ndata: {"changes":[],"cursor":"c1","has_more":false}\n\n: heartbeat\n\nevent: changes\nid: c2\ndata: {"changes":[{"resource":"todos","data":{"id":"é"}}],"cursor":"c2","has_more":false}\n\n';
  const events = p.push(bytes(stream));
  assert.deepEqual(events.map((e) => [e.type, e.id, JSON.parse(e.data).cursor]), [["changes", "c1", "c1"], ["changes", "c2", "c2"]]);
  assert.equal(JSON.parse(events[1].data).changes[0].data.id, "é");
  assert.equal(p.lastEventID, "c2");
});

test("split at every byte, with CRLF and CR line endings and a multi-byte character cut in two", () => {
  const text = "event: problem\r\ndata: {\"status\":410,\r\ndata: \"detail\":\"ç\"}\r\rdata: plain\n\n";
  const all = bytes(text);
  const p = new EventStreamParser();
  const events = [];
  for (let i = 0; i < all.length; i++) events.push(...p.push(all.subarray(i, i + 1)));
  events.push(...p.push(undefined, true));
  assert.deepEqual(events.map((e) => e.type), ["problem", "message"]);
  assert.deepEqual(JSON.parse(events[0].data), { status: 410, detail: "ç" });
  assert.equal(events[1].data, "plain");
});

test("an event the stream ended in the middle of is not dispatched", () => {
  const p = new EventStreamParser();
  assert.deepEqual(p.push(bytes("event: changes\ndata: {\"cursor\"")), []);
  assert.deepEqual(p.push(undefined, true), []);
});

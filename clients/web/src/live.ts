// Continuous mode for a device that follows several streams (the default stream and one
// per subscription): ONE request, `POST /v1/changes/wait` (docs/API.md), waits on all of
// their cursors, since a browser has 6 connections per origin and a stream each would
// take them. Its answer only names the streams with news; the engine then fetches those
// with the usual `GET /v1/changes`. Pure, so the body and what an answer triggers are
// tested under Node.

/** The body of `POST /v1/changes/wait`. */
export interface WaitBody {
  wait: number;
  /** Stream (`default`, or `name:id` as `stream=`) to the cursor the device holds for it. */
  since: Record<string, string>;
}

/**
 * The wait on every stream the device holds a cursor for: the default stream under the
 * key `default`, each subscription under its own name. A stream with no cursor yet is
 * left out (a round fetches it first); null when no stream has one (nothing to wait on).
 */
export function waitBody(
  defaultCursor: string | null | undefined,
  subscriptions: [stream: string, cursor: string | null | undefined][],
  wait = 20,
): WaitBody | null {
  const since: Record<string, string> = {};
  if (typeof defaultCursor === "string" && defaultCursor !== "") since["default"] = defaultCursor;
  for (const [stream, cursor] of subscriptions) {
    if (stream === "default") continue;  // not a stream name (`name:id`); the key is the default stream's
    if (typeof cursor === "string" && cursor !== "") since[stream] = cursor;
  }
  return Object.keys(since).length ? { wait, since } : null;
}

/** The streams to fetch after a wait's answer. */
export interface Follow {
  /** The default stream (`GET /v1/changes`). */
  default: boolean;
  /** Subscriptions (`GET /v1/changes?stream=`), in the order the device subscribed. */
  streams: string[];
}

/**
 * What a wait's answer (`{"changed": [...]}`) makes the engine fetch: the streams it
 * names that the device still follows (a subscription dropped meanwhile is not fetched;
 * an unknown key is ignored). `{"changed": []}` (the wait ran out, or the server shuts
 * down) fetches nothing: the device waits again. An answer of another shape fetches
 * everything, as a round would.
 */
export function afterWait(answer: unknown, subscriptions: string[]): Follow {
  const changed = (answer as { changed?: unknown } | null)?.changed;
  if (!Array.isArray(changed) || !changed.every((k) => typeof k === "string")) {
    return { default: true, streams: [...subscriptions] };
  }
  const named = new Set(changed as string[]);
  return { default: named.has("default"), streams: subscriptions.filter((s) => named.has(s)) };
}

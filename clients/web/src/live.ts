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
  /** Subscriptions (`GET /v1/changes?stream=`), in the order given (the queue's: by priority). */
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

/**
 * Most streams one wait names when the server does not say (`live.max_wait_streams`'s
 * default): past the server's cap a wait is 400, which would drop the device back to
 * following its subscriptions only at each round.
 */
export const defaultWaitCap = 100;

/**
 * Most waits held at once. A browser opens 6 connections per origin over HTTP/1.1; each
 * wait holds one for up to `wait` seconds, and uploads and fetches need the rest.
 */
export const maxWaits = 4;

/** The waits that cover a device's streams, at most `cap` keys each. */
export interface WaitPlan {
  bodies: WaitBody[];
  /**
   * Subscriptions beyond `maxWaits` waits of `cap` streams: not waited on, fetched
   * after every answer instead (so at least every `wait` seconds).
   */
  unwaited: string[];
}

/**
 * `waitBody`'s streams split into waits of at most `cap` keys each (the server's
 * `live.max_wait_streams`), in order: the default stream first, then the subscriptions
 * in the order given (the engine's: by priority, the most recently opened first, as FerryKit's). Streams with no cursor are left out as `waitBody` leaves them out.
 */
export function waitPlan(
  defaultCursor: string | null | undefined,
  subscriptions: [stream: string, cursor: string | null | undefined][],
  cap = defaultWaitCap,
  wait = 20,
  most = maxWaits,
): WaitPlan {
  const all = waitBody(defaultCursor, subscriptions, wait);
  if (!all) return { bodies: [], unwaited: [] };
  const size = Number.isInteger(cap) && cap >= 1 ? cap : defaultWaitCap;
  const keys = Object.keys(all.since);
  const bodies: WaitBody[] = [];
  for (let start = 0; start < keys.length && bodies.length < Math.max(1, most); start += size) {
    const since: Record<string, string> = {};
    for (const key of keys.slice(start, start + size)) since[key] = all.since[key];
    bodies.push({ wait, since });
  }
  const waited = new Set(bodies.flatMap((b) => Object.keys(b.since)));
  return { bodies, unwaited: keys.filter((k) => !waited.has(k)) };
}

/**
 * Sends every wait at once (`post`) and returns the first answer, whatever its status,
 * with its index: the others are aborted, and awaited, so that they hold no connection
 * when this returns (the first's own signal stays unaborted: its body is still to be
 * read). A wait that fails (the network) fails all of it; `signal` (a kick, `stop()`)
 * aborts every wait, the first's body included.
 */
export async function firstAnswer<R>(
  bodies: WaitBody[],
  post: (body: WaitBody, signal: AbortSignal) => Promise<R>,
  signal: AbortSignal,
): Promise<{ index: number; answer: R }> {
  const controllers = bodies.map(() => new AbortController());
  const abortAll = () => { for (const c of controllers) c.abort(); };
  if (signal.aborted) abortAll();
  signal.addEventListener("abort", abortAll);
  const sent = bodies.map((body, i) => post(body, controllers[i].signal));
  let first: { index: number; answer: R } | null = null;
  try {
    first = await Promise.race(sent.map((p, index) => p.then((answer) => ({ index, answer }))));
    return first;
  } finally {
    controllers.forEach((c, i) => { if (i !== first?.index) c.abort(); });
    await Promise.allSettled(sent);
    signal.removeEventListener("abort", abortAll);
    // The outer signal still cuts the first's body short (a kick while it is read).
    if (first !== null) {
      const winner = controllers[first.index];
      if (signal.aborted) winner.abort();
      else signal.addEventListener("abort", () => winner.abort(), { once: true });
    }
  }
}

/**
 * The server's `live.max_wait_streams`, as `GET /v1` advertises it; `defaultWaitCap`
 * (its default) when it does not (a server from before it did) or says something else
 * than a whole number from 1.
 */
export function waitCapOf(discovery: unknown): number {
  const cap = (discovery as { live?: { max_wait_streams?: unknown } } | null)?.live?.max_wait_streams;
  return typeof cap === "number" && Number.isInteger(cap) && cap >= 1 ? cap : defaultWaitCap;
}

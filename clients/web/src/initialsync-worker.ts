// The Worker side of an initial sync (EngineOptions.initialSyncWorker): the main thread's
// engine starts this module, which runs an engine of its own on the same IndexedDB store
// and calls its `initialSync`: Index pages fetched, parsed and applied here, so the
// ~300 KB of JSON and the 1,000 rows of each page never hold the app's main thread.
// The token provider stays on the main thread (it is the app's function): asked for
// through messages. Its commits and events go to the other tabs through the store's
// channel, posted here; to the main thread go its events and its commits cut to the keys
// the tab's query cache holds (told by the tab as they change: `commitFor`), so the tab
// never receives a slice's 1,000 rows it does not keep. The tab tells too when it starts
// a read of rows from IndexedDB: the slices are small while it reads (`readerSlice`).
// A "stop" message (the main thread's `stop()`) aborts the engine's fetches; the slice
// being written commits, the store is closed, and only then does the Worker answer
// ("error", stopped), so that nothing of it writes after the main thread's stop resolves.

import { FerryStore } from "./store.js";
import { SyncEngine, SyncPaused } from "./engine.js";
import { HttpError, NetworkError } from "./http.js";
import { RowData } from "./json.js";
import { commitFor } from "./querycache.js";

interface Start {
  type: "start";
  name: string;
  baseURL: string;
  token: string | null;
  pageSize?: number;
  initialSyncSlice?: number;
  initialSyncBudget?: number;
  /** Resources with a resolver on the main thread: their rows with local edits waiting are sent back. */
  defer: string[];
  /** This Worker's name on the tabs' channel (its tab passes over what it posts there). */
  worker: string;
  /** The keys the tab's query cache holds. */
  keys: string[];
}

// A dedicated worker's global scope (the DOM library types `self` as a window).
const scope = self as unknown as { onmessage: ((m: MessageEvent) => void) | null; postMessage(message: unknown): void };
const asked = new Map<number, { resolve: (token: string) => void; reject: (e: Error) => void }>();
let next = 0;
/** The engine of the initial sync in progress, and whether a stop came (maybe before it). */
let engine: SyncEngine | null = null;
let stopped = false;
/** The keys the tab keeps (its commits are cut to them), and the reads of rows it has started. */
let keys = new Set<string>();
let reads = 0;

function askToken(refresh: boolean): Promise<string> {
  const id = next++;
  return new Promise((resolve, reject) => {
    asked.set(id, { resolve, reject });
    scope.postMessage({ type: "token", id, refresh });
  });
}

scope.onmessage = async (m: MessageEvent) => {
  const message = m.data;
  if (message?.type === "token") {
    const waiting = asked.get(message.id);
    asked.delete(message.id);
    if (message.error !== undefined) waiting?.reject(new Error(message.error));
    else waiting?.resolve(message.token);
    return;
  }
  if (message?.type === "keys") { keys = new Set(message.keys as string[]); return; }
  if (message?.type === "read") { reads++; return; }
  if (message?.type === "stop") {
    stopped = true;
    void engine?.stop();
    for (const [id, waiting] of asked) {
      asked.delete(id);
      waiting.reject(new Error("stopped"));
    }
    return;
  }
  if (message?.type !== "start") return;
  const start = message as Start;
  keys = new Set(start.keys);
  let first = start.token;
  let store: FerryStore | null = null;
  try {
    // No cache here (the app reads in its tab). Each commit goes to the other tabs (the
    // store posts it) and to the tab, cut to its keys, ahead of the slice's "changed" event.
    store = await FerryStore.open(start.name, { worker: start.worker });
    store.onCommit = (commit, was) => scope.postMessage({ type: "commit", commit: commitFor(commit, was, keys) });
    const deferred: { resource: string; data: RowData }[] = [];
    engine = new SyncEngine(store, {
      baseURL: start.baseURL,
      token: async (refresh) => {
        if (!refresh && first) return first;
        first = null;
        return askToken(refresh);
      },
      pageSize: start.pageSize,
      initialSyncSlice: start.initialSyncSlice,
      initialSyncBudget: start.initialSyncBudget,
      initialSyncWorker: false,
    }, { defer: new Set(start.defer), deferred, reads: () => reads });
    engine.on((event) => scope.postMessage({ type: "event", event }));
    if (stopped) void engine.stop();
    await engine.initialSync();
    store.close();
    scope.postMessage({ type: "done", deferred });
  } catch (e) {
    // Closed before the answer: the main thread terminates the Worker on it.
    store?.close();
    // What the error was crosses too (an Error arrives as a plain one): the tab's
    // continuous mode tells "offline" from the server's answer by it.
    const network = e instanceof NetworkError ? { method: e.method, url: e.url, cause: e.cause instanceof Error ? `${e.cause.name}: ${e.cause.message}` : String(e.cause) } : undefined;
    const http = e instanceof HttpError ? { method: e.method, url: e.url, status: e.status, problem: e.problem } : undefined;
    scope.postMessage({ type: "error", paused: e instanceof SyncPaused, stopped, message: String((e as Error)?.message ?? e), network, http });
  }
};

scope.postMessage({ type: "ready" });

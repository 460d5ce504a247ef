// The Worker side of an initial sync (EngineOptions.initialSyncWorker): the main thread's
// engine starts this module, which runs an engine of its own on the same IndexedDB store
// and calls its `initialSync`: Index pages fetched, parsed and applied here, so the
// ~300 KB of JSON and the 1,000 rows of each page never hold the app's main thread.
// The token provider stays on the main thread (it is the app's function): asked for
// through messages. Events go to the main thread, which emits them to every tab.
// A "stop" message (the main thread's `stop()`) aborts the engine's fetches; the slice
// being written commits, the store is closed, and only then does the Worker answer
// ("error", stopped), so that nothing of it writes after the main thread's stop resolves.

import { FerryStore } from "./store.js";
import { SyncEngine, SyncPaused } from "./engine.js";
import { RowData } from "./json.js";

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
}

// A dedicated worker's global scope (the DOM library types `self` as a window).
const scope = self as unknown as { onmessage: ((m: MessageEvent) => void) | null; postMessage(message: unknown): void };
const asked = new Map<number, { resolve: (token: string) => void; reject: (e: Error) => void }>();
let next = 0;
/** The engine of the initial sync in progress, and whether a stop came (maybe before it). */
let engine: SyncEngine | null = null;
let stopped = false;

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
  let first = start.token;
  let store: FerryStore | null = null;
  try {
    // No cache here (the app reads in its tab): each commit goes to the tab, which puts
    // it in its cache and tells the other tabs, ahead of the slice's "changed" event.
    store = await FerryStore.open(start.name, { cache: false });
    store.onCommit = (commit) => scope.postMessage({ type: "commit", commit });
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
    }, { defer: new Set(start.defer), deferred });
    engine.on((event) => scope.postMessage({ type: "event", event }));
    if (stopped) void engine.stop();
    await engine.initialSync();
    store.close();
    scope.postMessage({ type: "done", deferred });
  } catch (e) {
    // Closed before the answer: the main thread terminates the Worker on it.
    store?.close();
    scope.postMessage({ type: "error", paused: e instanceof SyncPaused, stopped, message: String((e as Error)?.message ?? e) });
  }
};

scope.postMessage({ type: "ready" });

// The sync engine: uploads the outbox (planned by planner.ts, retried by retry.ts) and
// applies the changes feed (decided by merge.ts) into the IndexedDB store. One tab
// syncs at a time (Web Locks); every tab hears that the store changed (BroadcastChannel).

import { RowData } from "./json.js";
import { decide, needs, Resolver, Conflict } from "./merge.js";
import { plan, bundle, UploadBundle, UploadRequest, SchemaResource, rowKeyOf, digest } from "./planner.js";
import { RetryPolicy, retryAfterSeconds, Outcome } from "./retry.js";
import { FerryStore, StoredOperation, StoredRow, Edit, req, stores } from "./store.js";
import { EventStreamParser } from "./eventstream.js";
import { waitPlan, afterWait, firstAnswer, waitCapOf, defaultWaitCap } from "./live.js";
import { SliceSizer, readerSlice } from "./slices.js";
import { sweep, unconfirmed, restartSweep, RowKey } from "./unconfirmed.js";
import { refusals, Refusal } from "./schemacheck.js";
import { HttpError, NetworkError, httpError, baseURLOf } from "./http.js";
import { Subscription, SubscribeOptions, SubscriptionState, checkPriority, checkTTL, subscriptionsOf, subscribed, byPriority, downloadQueue, markedSynced, markedRefused, markedUnsubscribed, active, stateOf, eviction, dueForEviction, nextEviction, followedAfterDefault, waitedStreams, afterPage, spare, markedRestarted } from "./subscriptions.js";

/** Returns a bearer token: a Ferry token or the app's JWT. `refresh` asks for a new one after a 401. */
export type TokenProvider = (refresh: boolean) => Promise<string>;

export type SyncEvent =
  | { type: "changed"; resources: string[] }
  | { type: "conflict"; resource: string; id: string; conflicts: Conflict[] }
  | { type: "rejected"; resource: string; id: string; status: number; problem: unknown }
  | { type: "removed"; resource: string; id: string; revoked: boolean; discardedEdits: boolean; localVersion: RowData | null }
  | { type: "paused"; reason: string }
  /**
   * An unsubscribed stream's TTL passed (FerryKit's `.evicted`): `removed` rows that no
   * other subscription and not the default stream held left the store; `keptForEdits`
   * rows stay while they have edits waiting, and leave with a later round once those
   * are uploaded or refused (then this event comes again). `keptForEdits` 0: the
   * subscription is gone.
   */
  | { type: "evicted"; stream: string; removed: number; keptForEdits: number }
  /** A subscription's state changed (`engine.watchSubscription` hears these). */
  | { type: "subscription"; stream: string; state: SubscriptionState }
  /** A tab wrote to the store: the syncing tab uploads. */
  | { type: "written" }
  /**
   * Continuous mode (`start()`): a pass failed and the engine waits `retryInSeconds`
   * before the next (a local write or `kick()` ends the wait sooner). `offline`: no
   * answer came (no network, the server down, a wrong host or port, CORS refused);
   * else `status` is what the server answered (a 5xx, a 404 from a wrong base URL...).
   * `message` names the request (method, full URL) and the server's problem. Other
   * tabs hear it without `error` (an Error does not cross the channel whole).
   * A refused token is `paused`, not this.
   */
  | { type: "error"; message: string; offline: boolean; status: number | null; url: string | null; retryInSeconds: number; error?: unknown }
  /** Continuous mode: a pass succeeded after one or more `error` events. */
  | { type: "recovered" };

export interface EngineOptions {
  baseURL: string;
  token: TokenProvider;
  resolvers?: Record<string, Resolver>;
  retry?: RetryPolicy;
  /** Page size of the user's own changes feed (the default stream; FerryKit's 500). */
  limit?: number;
  /**
   * Page size of a subscription's stream (`streamPageLimit`, FerryKit's 2,000). A public
   * stream's pages are the same for every reader and a shared HTTP cache keeps them by
   * their URL, so every client of an app asks for the same pages; change it only with
   * the app's other clients.
   */
  streamLimit?: number;
  /** Page size of an initial sync's Index pages (at most 1000, the server's). */
  pageSize?: number;
  /** A new store fills itself from Index pages (the default), not from the feed's beginning. */
  initialSyncByIndex?: boolean;
  /**
   * Rows of an Index page applied per IndexedDB transaction during an initial sync
   * (1,000: a page of 1,000 in one). The app's `query` answers from memory meanwhile
   * (src/querycache.ts) and does not wait for them; `get`, `all` and a key's first
   * `query` wait for the slice in progress. With `initialSyncBudget`, the first size.
   */
  initialSyncSlice?: number;
  /**
   * Milliseconds one write transaction of an initial sync should run (0: none, every
   * slice `initialSyncSlice` rows). Given, a slice is the budget's worth of rows at
   * what a row cost in the last slices' transactions (the median; from each
   * transaction's start, not counting the wait behind the app's reads before it),
   * growing or shrinking by at most half each time, between 20 and 1,000 rows: for an
   * app that reads with `get` or `all` during the sync (6 was the default before the
   * query cache: three times the transactions, bench/web/README.md).
   */
  initialSyncBudget?: number;
  /**
   * How continuous mode hears of new changes: "sse" (the default) holds one
   * `text/event-stream` answer of `GET /v1/changes` open and applies each page it
   * pushes; "poll" long-polls (`wait=20`). A server or proxy that answers the stream
   * with anything else than an event stream makes the engine long-poll from then on.
   * A device with subscriptions waits on all its streams with one request instead
   * (`POST /v1/changes/wait`, see `waitAll`), whichever this says.
   */
  live?: "sse" | "poll";
  /**
   * An initial sync fetches, parses and applies its Index pages in a dedicated Worker
   * (src/initialsync-worker.ts), which writes IndexedDB itself: the page's JSON and its
   * 1,000 rows never reach the main thread, so the app's reads meanwhile wait for
   * nothing but the store. True by default where `Worker` exists and no `fetch` is given
   * (a Worker cannot call the app's); where the Worker cannot start, the main thread does it.
   */
  initialSyncWorker?: boolean;
  /** Most operations of one action on one resource sent as one bulk call (1: one request each). */
  maxBulk?: number;
  fetch?: typeof fetch;
  /** The clock of subscriptions' TTLs, in ms since the epoch (`Date.now` by default; tests inject theirs). */
  now?: () => number;
}

/** When a slice's write transaction started: the answer to its first read (set by `applyPage`). */
export interface SliceTiming {
  started?: number;
}

/**
 * Rows a page of a subscription's stream asks for: FerryKit's `streamPageLimit`, so that
 * a browser and a phone ask for the same URLs and a shared cache serves both.
 */
export const streamPageLimit = 2000;

export class SyncEngine {
  private listeners = new Set<(e: SyncEvent) => void>();
  private token: string | null = null;
  private schema: SchemaResource[] | null = null;
  private running = false;
  private attempt = 0;
  /**
   * Aborted by `stop()`: every request of a round, the initial sync's Worker and the
   * wait for the Web Lock end with it. A new one is made by the next `sync()` or
   * `start()`, once the stopped work has ended (`stopping`).
   */
  private halt = new AbortController();
  /** Rounds (`sync()`) and continuous mode's loop now running: `stop()` resolves when they have ended. */
  private inFlight = new Set<Promise<unknown>>();
  /** The stop in progress: what it waits for. */
  private stopping: Promise<void> | null = null;
  readonly retry: RetryPolicy;
  /** The subscription whose first download runs now (its state is "syncing"). */
  private syncingStream: string | null = null;
  /** The state last announced per stream: a `subscription` event goes only when it changes. */
  private announced = new Map<string, string>();
  /** `options.baseURL` without trailing slashes (one ending in /v1 is refused: `baseURLOf`). */
  private readonly baseURL: string;

  /**
   * @internal The initial sync's Worker side (src/initialsync-worker.ts): its events go
   * to the main thread and to the other tabs (its store's channel, as its commits); rows
   * with local edits waiting, of a resource the app gave a resolver (a function, which
   * stays on the main thread), are `deferred` for the main thread to apply; `reads`: the
   * reads of rows its tab has started (told by the tab), for the slices' size.
   */
  constructor(readonly store: FerryStore, readonly options: EngineOptions, private readonly inWorker?: { defer: Set<string>; deferred: { resource: string; data: RowData }[]; reads: () => number }) {
    this.retry = options.retry ?? new RetryPolicy();
    this.baseURL = baseURLOf(options.baseURL);
    // The tabs' channel is the store's: one channel carries both its commits and these
    // events, in the order sent, so a tab's cache has taken a commit before its app hears
    // the "changed" event that follows it.
    if (!inWorker) {
      store.listen((message) => {
        const e = message as SyncEvent;
        if (e.type === "written") this.kick();
        // Another tab subscribed or unsubscribed: the next eviction due may have moved,
        // and this tab's wait may be held for minutes with no round to re-arm it.
        if (e.type === "subscription" && this.running) this.track(this.armEviction()).catch(() => {});
        this.emit(e, false);
      });
      // This tab's writes, through the engine or the store itself: the store tells the
      // other tabs; here the app hears `written` and the upload starts. (A test's
      // stand-in store may have no onWrite: it stores no edits.)
      store.onWrite?.(() => {
        this.emit({ type: "written" }, false);
        this.kick();
      });
    }
  }

  /**
   * Writes through the store (`store.write`: several edits are one group, one
   * /v1/batch) and starts their upload (in this tab or the one that syncs).
   */
  async write(edits: Edit[]): Promise<string[]> {
    return this.store.write(edits);
  }

  /**
   * Many edits in one IndexedDB transaction, each its own operation (`store.writeMany`),
   * and their upload started, once.
   */
  async writeMany(edits: Edit[]): Promise<string[]> {
    return this.store.writeMany(edits);
  }

  on(listener: (e: SyncEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: SyncEvent, broadcast = true): void {
    for (const l of this.listeners) l(e);
    if (!broadcast) return;
    if (e.type === "error") {
      const { error: _error, ...plain } = e;
      this.store.broadcast(plain);
    } else {
      this.store.broadcast(e);
    }
  }

  /** Sends a request; `signal` (the long poll's, or else the round's) aborts it. */
  private async send(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, signal: AbortSignal = this.halt.signal, cache?: RequestCache): Promise<Response> {
    const f = this.options.fetch ?? fetch;
    let refreshed = false;
    for (;;) {
      this.throwIfHalted();
      this.token ??= await this.options.token(false);
      const h: Record<string, string> = { ...headers, Authorization: `Bearer ${this.token}` };
      if (body !== undefined) h["Content-Type"] = "application/json";
      const init: RequestInit = { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body), signal };
      if (cache) init.cache = cache;
      const url = this.baseURL + path;
      let res: Response;
      try {
        res = await f(url, init);
      } catch (e) {
        // Aborted (a stop, a kick): as it is, the callers look at their signal.
        if (signal.aborted) throw e;
        throw new NetworkError(method, url, e);
      }
      if (res.status !== 401) return res;
      const step = this.retry.step({ status: 401 }, 0, refreshed);
      if (step.step === "pause") {
        this.emit({ type: "paused", reason: "unauthorized" });
        throw new SyncPaused("the token provider's token was refused twice");
      }
      refreshed = true;
      this.token = await this.options.token(true);
    }
  }

  /** The HttpError of an answer to `path`: the full URL, the status, the server's problem. */
  private failure(method: string, path: string, res: Response): Promise<HttpError> {
    return httpError(method, this.baseURL + path, res);
  }

  /**
   * The resources and their references, from GET /v1 (read once, or again when `fresh`),
   * given to the store too: its writes are then checked against them (`store.schema`).
   */
  private async loadSchema(fresh = false): Promise<SchemaResource[]> {
    if (this.schema && !fresh) return this.schema;
    const res = await this.send("GET", "/v1");
    if (!res.ok) throw await this.failure("GET", "/v1", res);
    const doc = await res.json().catch(() => null);
    if (!Array.isArray(doc?.resources)) throw new Error(`GET ${this.baseURL}/v1: the answer lists no resources; is ${this.baseURL} a Ferry server?`);
    this.schema = (doc.resources as SchemaResource[]);
    this.waitCap = waitCapOf(doc);
    if (!this.inWorker) this.store.schema = this.schema;
    return this.schema;
  }

  /**
   * The server's resources with their columns, as `GET /v1` lists them (read once by this
   * engine; a round reads them too): an app can check that the server it talks to has
   * the resources it writes (the todo example says so when it has not).
   */
  async resources(): Promise<SchemaResource[]> {
    return this.loadSchema();
  }

  /** One round: upload the outbox, then download the feed. Resolves when both are done or deferred. */
  async sync(): Promise<void> {
    await this.resume();
    const halt = this.halt.signal;
    return this.track((async () => {
      try {
        if (typeof navigator !== "undefined" && navigator.locks) {
          const round = navigator.locks.request(`ferry-sync:${this.store.name}`, { signal: halt }, () => this.round());
          // This tab's continuous mode holds the lock while its live request waits (an
          // event stream: minutes): that request ends now that this one is queued, so this
          // round comes next. (Not a kick: the loop's own rounds come here too.)
          this.poll?.abort();
          await round;
        } else {
          await this.round();
        }
      } catch (e) {
        // Whatever a stop cut short (an aborted fetch, the wait for the lock) ends the same way.
        if (halt.aborted && !(e instanceof SyncPaused)) throw new SyncStopped();
        throw e;
      }
    })());
  }

  /**
   * Upload; then the download queue (subscriptions not synced yet, by priority, the most
   * recently opened first); then the default stream; then the synced subscriptions' news
   * (FerryKit's order: the stream just opened before everything else).
   */
  private async round(): Promise<void> {
    // Evictions need no network; after the upload, rows kept for their edits may go too.
    await this.evict();
    await this.upload();
    this.throwIfHalted();
    await this.evict();
    // The streams this round followed to their end: not asked again by followSynced.
    const followed = new Set<string>();
    await this.pullQueue(followed);
    this.throwIfHalted();
    await this.download(0);
    this.throwIfHalted();
    await this.followSynced(followed);
  }

  /** Throws SyncStopped once `stop()` was called: what follows would write to the store. */
  private throwIfHalted(): void {
    if (this.halt.signal.aborted) throw new SyncStopped();
  }

  /** Before new work: a stop in progress ends first, then a fresh `halt` (the stopped one stays aborted). */
  private async resume(): Promise<void> {
    while (this.stopping) await this.stopping;
    if (this.halt.signal.aborted) this.halt = new AbortController();
  }

  /** Notes `work` as running until it settles: `stop()` waits for it. */
  private track<T>(work: Promise<T>): Promise<T> {
    this.inFlight.add(work);
    const forget = () => { this.inFlight.delete(work); };
    work.then(forget, forget);
    return work;
  }

  /**
   * Subscribes to a stream (`name:id`, a row of a scope table declared with
   * `ferry.sync_stream` and what hangs from it, public rows included): from the next
   * round on, its changes are followed on a cursor of its own (`GET /v1/changes?stream=`),
   * kept with its rows, from its beginning. Nothing is stored on the server.
   *
   * `priority` ("low", "normal", "high"; FerryKit's) is its place in the download queue:
   * a round downloads the subscriptions not synced yet first, higher priority first and,
   * within one, the most recently opened first; one made while another downloads
   * overtakes it at its next page. Subscribing again moves it to the head of its
   * (possibly new) priority; one that synced resumes from its cursor.
   */
  async subscribe(stream: string, options: SubscribeOptions = {}): Promise<void> {
    const priority = checkPriority(options.priority);
    const ttl = checkTTL(options.ttl);
    await this.store.transaction(async (tx) => {
      const state = tx.objectStore(stores.STATE);
      state.put(subscribed(subscriptionsOf(await req(state.get("subscriptions"))), stream, priority, ttl), "subscriptions");
    });
    await this.announce(stream);
    this.kick();
  }

  /**
   * The subscriptions, in the download queue's order: higher priority first, within one
   * the latest opened first; unsubscribed ones within their TTL included (`unsubscribedAt`).
   */
  async subscriptions(): Promise<Subscription[]> {
    return byPriority(subscriptionsOf(await this.store.state("subscriptions")));
  }

  /** The active subscribed streams' names, in the queue's order, but those the server refused (a wait naming one is 400). */
  private async streams(): Promise<string[]> {
    return waitedStreams(subscriptionsOf(await this.store.state("subscriptions")));
  }

  /** A subscription's state now (FerryKit's `state()`). */
  async subscriptionState(stream: string): Promise<SubscriptionState> {
    const s = subscriptionsOf(await this.store.state("subscriptions")).find((s) => s.stream === stream);
    return stateOf(s, this.syncingStream === stream);
  }

  /**
   * Calls `listener` with a subscription's state, then with each change of it, in this
   * tab whichever tab syncs (FerryKit's `states()`), until the function returned is called.
   */
  watchSubscription(stream: string, listener: (state: SubscriptionState) => void): () => void {
    let last = "";
    let stopped = false;
    const tell = (state: SubscriptionState) => {
      const key = JSON.stringify(state);
      if (stopped || key === last) return;
      last = key;
      listener(state);
    };
    const off = this.on((e) => { if (e.type === "subscription" && e.stream === stream) tell(e.state); });
    void this.subscriptionState(stream).then((state) => { if (last === "") tell(state); }, () => {});
    return () => { stopped = true; off(); };
  }

  /** Sends a `subscription` event (to every tab) when the stream's state changed since the last one. */
  private async announce(stream: string): Promise<void> {
    const state = await this.subscriptionState(stream);
    const key = JSON.stringify(state);
    if (this.announced.get(stream) === key) return;
    this.announced.set(stream, key);
    this.emit({ type: "subscription", stream, state });
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /**
   * Unsubscribes (FerryKit's `unsubscribe`): the stream leaves the download queue and is
   * followed no more at once (one not yet synced is never asked again), but its rows and
   * cursor stay as a warm cache for its `ttl` (subscribing again within it resumes from
   * the cursor). Then they leave (`evict`), with an `evicted` event: at once with a TTL
   * of 0 (this call evicts what is due), in continuous mode when the TTL ends, else with
   * the first round after it.
   */
  async unsubscribe(stream: string): Promise<void> {
    await this.store.transaction(async (tx) => {
      const state = tx.objectStore(stores.STATE);
      state.put(markedUnsubscribed(subscriptionsOf(await req(state.get("subscriptions"))), stream, this.now()), "subscriptions");
    });
    await this.announce(stream);
    await this.evict();
    if (this.running) await this.armEviction();
  }

  /** Continuous mode's timer for the next eviction due (`nextEviction`); null: none armed. */
  private evictionTimer: ReturnType<typeof setTimeout> | null = null;
  /** Counts `armEviction` calls: one that a later call overtook while it read the store arms nothing. */
  private evictionArmed = 0;

  /**
   * Continuous mode: (re)arms the timer for the next eviction due, so that a device that
   * only listens (a wait or the event stream open for minutes, no round) evicts an
   * unsubscribed stream's rows when its TTL ends, not at its next round. The eviction
   * needs no network and takes no Web Lock (the wait holds it): IndexedDB orders its
   * transaction with the pages'. Armed after every round and wait, by `unsubscribe`, and when
   * another tab's `subscription` event arrives (its unsubscribe moved the next one due).
   */
  private async armEviction(): Promise<void> {
    const turn = ++this.evictionArmed;
    const list = subscriptionsOf(await this.store.state("subscriptions"));
    if (turn !== this.evictionArmed) return;
    if (this.evictionTimer !== null) clearTimeout(this.evictionTimer);
    this.evictionTimer = null;
    const now = this.now();
    const due = this.running ? nextEviction(list, now) : null;
    if (due === null) return;
    // setTimeout holds at most 2^31 - 1 ms (24.8 days): a longer TTL is armed again then.
    this.evictionTimer = setTimeout(() => {
      this.evictionTimer = null;
      if (!this.running) return;
      this.track(this.evict().then(() => this.armEviction())).catch(() => {});
    }, Math.min(Math.max(0, due - now), 2 ** 31 - 1));
  }

  /** Disarms the eviction timer (`stop()`). */
  private disarmEviction(): void {
    this.evictionArmed++;
    if (this.evictionTimer !== null) clearTimeout(this.evictionTimer);
    this.evictionTimer = null;
  }

  /**
   * FerryKit's `evictExpired`, at each round's start and after its upload: the
   * unsubscribed streams whose TTL has passed leave, with the rows they brought
   * (`held:<stream>`, noted page by page) that no other subscription (active or in its
   * TTL) and not the default stream (`held:`) holds, but those with edits waiting (not
   * rejected), which stay until a later eviction finds them uploaded or refused. One
   * `evicted` event per stream that removed rows or ended.
   */
  async evict(): Promise<void> {
    const now = this.now();
    const touched = new Set<string>();
    let outcome: ReturnType<typeof eviction> | null = null;
    await this.store.transaction(async (tx) => {
      const state = tx.objectStore(stores.STATE), rows = tx.objectStore(stores.ROWS), outbox = tx.objectStore(stores.OUTBOX);
      const list = subscriptionsOf(await req(state.get("subscriptions")));
      const due = dueForEviction(list, now);
      if (due.length === 0) return;
      const [heldBy, heldByDefault] = await Promise.all([
        Promise.all(list.map((s) => req(state.get(`held:${s.stream}`)))),
        req(state.get("held:")),
      ]);
      const held = new Map(list.map((s, i) => [s.stream, (heldBy[i] ?? []) as string[]]));
      // What each due stream's rows are decided on: whether the store has them, and edits waiting.
      const keys = [...new Set(due.flatMap((s) => held.get(s.stream) ?? []))];
      const facts = await Promise.all(keys.map(async (key) => {
        const [resource, id] = key.split("\u0000");
        const [row, ops] = await Promise.all([req(rows.get([resource, id])), req(outbox.index("row").getAll([resource, id])) as Promise<StoredOperation[]>]);
        return [key, { exists: !!row, pending: ops.some((o) => o.state !== "rejected") }] as const;
      }));
      const fact = new Map(facts);
      const out = eviction(list, held, new Set<string>(heldByDefault ?? []), (k) => fact.get(k)?.pending ?? false, (k) => fact.get(k)?.exists ?? false, now);
      for (const key of out.remove) {
        const [resource, id] = key.split("\u0000");
        rows.delete([resource, id]);
        this.store.noteRow(tx, resource, id, null);
        tx.objectStore(stores.BASES).delete([resource, id]);
        touched.add(resource);
      }
      for (const { stream, ended } of out.streams) {
        if (ended) {
          state.delete(`cursor:${stream}`);
          state.delete(`held:${stream}`);
          state.delete(`unconfirmed:${stream}`);
        }
      }
      for (const s of due) if (out.held.has(s.stream)) state.put(out.held.get(s.stream), `held:${s.stream}`);
      state.put(out.list, "subscriptions");
      if (out.list.length === 0) state.delete("held:");
      outcome = out;
    }, { noteRows: true });  // (its rows told: the query caches follow it, most rounds write nothing)
    const done = outcome as ReturnType<typeof eviction> | null;
    if (!done) return;
    for (const { stream, removed, keptForEdits } of done.streams) this.emit({ type: "evicted", stream, removed, keptForEdits });
    if (touched.size) this.emit({ type: "changed", resources: [...touched] });
    for (const { stream } of done.streams) await this.announce(stream);
  }

  /**
   * The download queue: while a subscription that has not synced waits, the head goes
   * (by priority, then the most recently opened). A stream that a new head overtakes
   * stops after its current page (its cursor saved) and waits its turn again; one
   * unsubscribed before it synced has left the queue, and nothing more of it is asked.
   * The streams it followed to their end are added to `done`.
   */
  private async pullQueue(done: Set<string>): Promise<void> {
    for (;;) {
      this.throwIfHalted();
      const head = downloadQueue(subscriptionsOf(await this.store.state("subscriptions")))[0];
      if (!head) return;
      if (await this.followStream(head.stream, false, true) === "done") done.add(head.stream);
    }
  }

  /**
   * The synced subscriptions' news, by priority, but those of `followed` (followed to
   * their end this round already); a subscription made meanwhile (the queue) goes before
   * the rest.
   */
  private async followSynced(followed: Set<string>): Promise<void> {
    for (;;) {
      await this.pullQueue(followed);
      const next = followedAfterDefault(subscriptionsOf(await this.store.state("subscriptions"))).find((s) => !followed.has(s.stream));
      if (!next) return;
      followed.add(next.stream);
      await this.followStream(next.stream, false, false);
    }
  }

  /**
   * Follows the streams of `only` that are still subscribed, in the queue's order, then
   * the queue of subscriptions made meanwhile (after a wait's answer).
   */
  private async followSubscriptions(only: string[], fresh: boolean): Promise<void> {
    const named = new Set(only);
    for (const stream of (await this.streams()).filter((s) => named.has(s))) await this.followStream(stream, fresh, false);
    await this.pullQueue(new Set());
  }

  /**
   * Follows one subscription's stream from its own cursor to its end, each page applied
   * with its cursor (and, at its end, the subscription marked synced) in one
   * transaction. "dropped": unsubscribed meanwhile, nothing more asked; "overtaken"
   * (`preemptible`, the queue's): another subscription is now the queue's head;
   * "refused": the server answered 400 (a stream it does not declare, an id of the
   * wrong type), noted on the subscription, which leaves the queue: with the queue
   * before the default stream, one bad subscription would otherwise stop every round.
   * `fresh` (after a wait named the stream): never the browser's cached copy. A public
   * stream's page is `Cache-Control: public, max-age=1` (docs/API.md), so the same URL
   * asked again within that second came from the HTTP cache, with no news: the cursor
   * stayed, the wait answered at once again, and the engine spun until the copy went
   * stale. The wait has just said the page changed; the cache is asked to check.
   */
  private async followStream(stream: string, fresh: boolean, preemptible: boolean): Promise<"done" | "dropped" | "overtaken" | "refused"> {
    // Its first download (not synced yet) is "syncing" while it runs; then synced,
    // refused, or queued again (overtaken, or the round failed).
    const first = !(subscriptionsOf(await this.store.state("subscriptions")).find((s) => s.stream === stream)?.synced ?? true);
    if (first) {
      this.syncingStream = stream;
      await this.announce(stream);
    }
    try {
      return await this.followStreamPages(stream, fresh, preemptible);
    } finally {
      if (first) {
        this.syncingStream = null;
        await this.announce(stream).catch(() => {});
      }
    }
  }

  private async followStreamPages(stream: string, fresh: boolean, preemptible: boolean): Promise<"done" | "dropped" | "overtaken" | "refused"> {
    // The first page from a kept cursor is asked with `If-None-Match` on it, as
    // FerryKit's: nothing after it is a 304 and no body (a subscription made again
    // within its TTL, or a synced one with no news).
    let check = true;
    let restarted = false;
    for (;;) {
      this.throwIfHalted();
      const cursor = await this.store.state<string | null>(`cursor:${stream}`);
      const query = new URLSearchParams({ limit: String(this.options.streamLimit ?? streamPageLimit), stream });
      if (cursor) query.set("since", cursor);
      const conditional: Record<string, string> = check && cursor ? { "If-None-Match": `"${cursor}"` } : {};
      check = false;
      // A restart's first page (after a 410; its rows listed as unconfirmed) is never the
      // browser's cached copy either. The first download asked the same URL, and a public
      // stream's page may be kept for `max-age`: a copy from before the 410 brought rows
      // the server has since deleted (its sweep then kept them) and a cursor that is
      // already expired (the next round met 410 again).
      const restarting = !cursor && (await this.store.state(`unconfirmed:${stream}`)) != null;
      const res = await this.send("GET", `/v1/changes?${query}`, undefined, conditional, undefined, fresh || restarting ? "no-cache" : undefined);
      if (res.status === 304) {
        // Its stream's end: a subscription queued to catch up is synced again.
        await this.store.transaction(async (tx) => {
          const state = tx.objectStore(stores.STATE);
          const list = subscriptionsOf(await req(state.get("subscriptions")));
          if (list.some((s) => s.stream === stream && !s.synced)) state.put(markedSynced(list, stream), "subscriptions");
        });
        return "done";
      }
      if (res.status === 410) {
        // Again, from a cursor its restart's own pages gave: the round ends with an error
        // (FerryKit's rule; the next round starts over), rather than asking without end.
        if (restarted) throw new Error(`GET /v1/changes?stream=${stream}: 410 cursor_expired right after its restart`);
        restarted = true;
        // cursor_expired: the subscription starts over from its beginning. Its rows stay
        // readable, listed as unconfirmed (`unconfirmed:<stream>`): each page of the new
        // download confirms what it brings, and at the stream's end what is left leaves
        // (`applyPage`). A restart cut short and started again lists them all again.
        await this.store.transaction(async (tx) => {
          const state = tx.objectStore(stores.STATE);
          state.put(null, `cursor:${stream}`);
          state.put((await req(state.get(`held:${stream}`))) ?? [], `unconfirmed:${stream}`);
        });
        continue;
      }
      if (res.status === 400) {
        const problem = await res.json().catch(() => null);
        const reason = typeof problem?.detail === "string" ? problem.detail : "the server refused the stream (400)";
        await this.store.transaction(async (tx) => {
          const state = tx.objectStore(stores.STATE);
          state.put(markedRefused(subscriptionsOf(await req(state.get("subscriptions"))), stream, reason), "subscriptions");
        });
        return "refused";
      }
      if (!res.ok) throw await this.failure("GET", `/v1/changes?${query}`, res);
      const page = await res.json();
      await this.applyPage(page.changes, page.cursor, stream, !page.has_more);
      // Its end; dropped before it synced (it leaves the queue now); or overtaken by a new head.
      const outcome = afterPage(subscriptionsOf(await this.store.state("subscriptions")), stream, !!page.has_more, preemptible);
      if (outcome !== "next") return outcome;
    }
  }

  /** Sends every planned request; stops at the first that must wait (a retry). */
  async upload(): Promise<void> {
    let schema = await this.loadSchema();
    // Read again before refusing a write for a name it lacks: it may predate a migration.
    let fresh = false;
    const solo = new Set<string>();
    for (let passes = 0; passes < 20; passes++) {
      const ops = (await this.store.operations()).filter((o) => o.state !== "rejected");
      if (ops.length === 0) return;
      // A resource or a field the server lacks: the planner would leave it out, and the
      // operation would be taken for a cancelled one and deleted. Refused instead.
      let refused = refusals(ops, schema);
      if (refused.length && !fresh) {
        schema = await this.loadSchema(true);
        fresh = true;
        refused = refusals(ops, schema);
      }
      if (refused.length) {
        for (const refusal of refused) await this.refuseLocally(refusal);
        continue;
      }
      const rows = new Map<string, RowData>();
      const bases = new Map<string, number>();
      const tx = this.store.tx("readonly");
      // Each row once, all read at once (an await per read is a round trip to storage).
      const unique = [...new Map(ops.map((op) => [rowKeyOf(op.resource, op.rowID), op])).entries()];
      await Promise.all(unique.map(async ([key, op]) => {
        const [row, base] = await Promise.all([
          req(tx.objectStore(stores.ROWS).get([op.resource, op.rowID])), req(tx.objectStore(stores.BASES).get([op.resource, op.rowID])),
        ]);
        if (row) rows.set(key, row.data);
        if (base) bases.set(key, base.revision);
        else if (typeof row?.data?.revision === "number") bases.set(key, row.data.revision);
      }));
      const requests = plan(ops, schema, rows, bases);
      await this.discardCancelled(ops, requests);
      if (requests.length === 0) return;
      let again = false;
      // The calls, in order: an app's write group (one store.write of several edits,
      // joined with every group sharing a row) as one /v1/batch; many requests of one
      // action on one resource as one bulk call; the rest alone (FerryKit's bundle).
      for (const call of bundle(requests, schema, this.options.maxBulk ?? 100, solo)) {
        this.throwIfHalted();
        let outcome: "ok" | "again" | "wait";
        if (call.batch) {
          outcome = await this.sendBatch(call.requests);
          // A merged group goes again next pass; what follows may need its rows.
          if (outcome === "again") { again = true; break; }
        } else if (call.bulk) {
          const alone = await this.sendBulk(call);
          if (alone === "wait") return;
          // Refused whole: the rows it names go alone next pass (merged, or rejected by
          // themselves), the rest in bulk again; nothing after it goes this pass, its
          // children would meet a parent not there yet.
          if (alone) { for (const k of alone) solo.add(k); again = true; break; }
          outcome = "ok";
        } else {
          outcome = await this.sendUpload(call.requests[0]);
        }
        if (outcome === "wait") return;
        if (outcome === "again") again = true;
      }
      if (!again) return;
    }
  }

  /**
   * One bulk call (`POST`, `PATCH` or `DELETE /v1/<r>` with an array; all items or none),
   * resent byte for byte under its key until answered. Null when the server took it; the
   * rows to send alone when it refused it (those its `errors` name, else all); "wait"
   * when the round must stop (no answer, 5xx, 429, 401).
   */
  private async sendBulk(call: UploadBundle): Promise<Set<string> | null | "wait"> {
    const key = `sent:${call.idempotencyKey}`;
    type Http = { method: string; path: string; body?: unknown; headers: Record<string, string> };
    const sent = await this.store.state<Http>(key);
    const http: Http = sent ?? bulkRequest(call);
    await this.store.transaction(async (tx) => {
      if (!sent) tx.objectStore(stores.STATE).put(http, key);
      // A bulk call's requests are of distinct rows: their reads and writes go at once.
      await Promise.all(call.requests.map((r) => this.markSentIn(tx, r)));
    });
    const { outcome, res, answer } = await this.exchange(http);
    const step = this.retry.step(outcome, this.attempt);
    const pending = async () => {
      await this.store.transaction(async (tx) => {
        if (res && !(res.status === 409 && answer?.code === "idempotency_key_in_use")) tx.objectStore(stores.STATE).delete(key);
        await Promise.all(call.requests.map((r) => this.setOpsIn(tx, r, "pending")));
      });
    };
    switch (step.step) {
      case "success": {
        if (!Array.isArray(answer) || answer.length !== call.requests.length) {
          await pending();
          return "wait";
        }
        this.attempt = 0;
        await this.store.transaction(async (tx) => {
          tx.objectStore(stores.STATE).delete(key);
          await Promise.all(call.requests.map((r, i) => this.settleIn(tx, r, answer[i])));
        });
        this.emit({ type: "changed", resources: [call.requests[0].resource] });
        return null;
      }
      case "retry": case "refreshToken": case "pause":
        this.attempt++;
        await pending();
        this.nextDelay = step.step === "retry" ? step.after : 0;
        return "wait";
      default: {
        await pending();
        const keys = call.requests.map((r) => rowKeyOf(r.resource, r.rowID));
        const named = (Array.isArray(answer?.errors) ? answer.errors : [])
          .map((e: any) => (typeof e?.index === "number" ? keys[e.index] : undefined))
          .filter((k: string | undefined): k is string => k !== undefined);
        return new Set(named.length ? named : keys);
      }
    }
  }

  /** Sends one upload request and reads its answer: a transport failure is an outcome, not an error (a paused sync is). */
  private async exchange(http: { method: string; path: string; body?: unknown; headers: Record<string, string> }): Promise<{ outcome: Outcome; res: Response | null; answer: any }> {
    try {
      const res = await this.send(http.method, http.path, http.body, http.headers);
      const answer = await res.json().catch(() => null);
      return { outcome: { status: res.status, retryAfter: retryAfterSeconds(res.headers.get("Retry-After"), Date.now()), code: answer?.code ?? null }, res, answer };
    } catch (e) {
      if (e instanceof SyncPaused) throw e;
      return { outcome: { transportFailure: true }, res: null, answer: null };
    }
  }

  private async markSent(request: UploadRequest): Promise<void> {
    await this.store.transaction((tx) => this.markSentIn(tx, request));
  }

  private async markSentIn(tx: IDBTransaction, request: UploadRequest): Promise<void> {
    const outbox = tx.objectStore(stores.OUTBOX);
    for (const op of await this.opsOf(tx, request)) {
      op.sent = true;
      op.state = "inflight";
      op.attempts += 1;
      outbox.put(op);
    }
  }

  private async opsOf(tx: IDBTransaction, request: Pick<UploadRequest, "resource" | "rowID" | "opIDs">): Promise<StoredOperation[]> {
    const all: StoredOperation[] = await req(tx.objectStore(stores.OUTBOX).index("row").getAll([request.resource, request.rowID]));
    return all.filter((o) => request.opIDs.includes(o.opID));
  }

  /** One request with its Idempotency-Key; "ok" when settled, "again" to re-plan, "wait" to stop the round. */
  private async sendUpload(request: UploadRequest): Promise<"ok" | "again" | "wait"> {
    // A request sent before under this key without an answer goes again byte for byte:
    // the server may have applied it, and only the same request replays its answer (a
    // body rebuilt on a newer base would be 422 idempotency_key_reused).
    const key = `sent:${request.idempotencyKey}`;
    const sent = await this.store.state<{ method: string; path: string; body?: unknown; headers: Record<string, string> }>(key);
    const http = sent ?? httpRequest(request);
    if (!sent) await this.store.setState(key, http);
    await this.markSent(request);
    let { outcome, res, answer } = await this.exchange(http);
    // An answer settles what the key means: a success is stored (a later request
    // replays it), a refusal is not (the server wrote nothing). Only while the first
    // send may still be running, or no answer came, must the request stay the same.
    if (res && !(res.status === 409 && answer?.code === "idempotency_key_in_use")) {
      const tx = this.store.tx("readwrite");
      tx.objectStore(stores.STATE).delete(key);
    }
    // A delete that meets 404 wanted the row gone: it is.
    if (request.action === "delete" && res?.status === 404) outcome = { status: 200 };
    const step = this.retry.step(outcome, this.attempt);
    switch (step.step) {
      case "success":
        this.attempt = 0;
        await this.settle(request, answer);
        return "ok";
      case "retry":
        this.attempt++;
        await this.setOps(request, "pending");
        this.nextDelay = step.after;
        return "wait";
      case "merge":
        if (request.action === "create" && res?.status === 409 && answer?.code === "already_exists" && answer.current) {
          // The server has the row (an earlier send of this create, its answer lost,
          // before later edits joined it): the create becomes an update of what was set.
          await this.createBecameUpdate(request);
        }
        if (answer?.current) await this.applyPage([{ resource: request.resource, data: answer.current }], null);
        await this.setOps(request, "pending");
        return "again";
      case "tombstone":
        await this.applyPage([{ resource: request.resource, data: { ...(answer?.current ?? {}), id: request.rowID, is_deleted: true } }], null);
        return "again";
      default:
        await this.setOps(request, "rejected", answer);
        await this.rollBack(request);
        this.emit({ type: "rejected", resource: request.resource, id: request.rowID, status: res?.status ?? 0, problem: answer });
        // A refused create takes the rows made locally under it along; nothing else waits on it.
        if (request.action === "create") await this.rejectDependants(request.resource, request.rowID);
        return "again";
    }
  }

  /**
   * A refused request's row rolls back: to the server's version (its base) with the
   * fields of edits still waiting laid over it, or out of the store when the server
   * never had it.
   */
  private async rollBack(request: Pick<UploadRequest, "resource" | "rowID">): Promise<void> {
    await this.store.transaction(async (tx) => {
      const rows = tx.objectStore(stores.ROWS);
      const base = await req(tx.objectStore(stores.BASES).get([request.resource, request.rowID]));
      if (!base) {
        rows.delete([request.resource, request.rowID]);
        return;
      }
      const row: RowData = { ...base.row };
      const local = (await req(rows.get([request.resource, request.rowID])))?.data as RowData | undefined;
      const waiting: StoredOperation[] = (await req(tx.objectStore(stores.OUTBOX).index("row").getAll([request.resource, request.rowID])))
        .filter((o: StoredOperation) => o.state !== "rejected");
      if (local) for (const f of new Set(waiting.flatMap((o) => o.fields))) if (f in local) row[f] = local[f];
      rows.put(this.store.record(request.resource, request.rowID, row));
    });
  }

  /**
   * A row whose waiting operations name a resource or a field the server lacks
   * (src/schemacheck.ts): all of them are rejected with the problem (the row as the app
   * wrote it in its `localVersion`), the row rolls back, a `rejected` event names it,
   * and a refused create takes the rows made under it along, as a server's refusal does.
   */
  private async refuseLocally(refusal: Refusal): Promise<void> {
    const local = (await req(this.store.tx("readonly").objectStore(stores.ROWS).get([refusal.resource, refusal.rowID])))?.data ?? null;
    const problem = { ...refusal.problem, localVersion: local };
    await this.setOps(refusal, "rejected", problem);
    await this.rollBack(refusal);
    this.emit({ type: "rejected", resource: refusal.resource, id: refusal.rowID, status: problem.status, problem });
    if (refusal.created) await this.rejectDependants(refusal.resource, refusal.rowID);
  }

  /**
   * Operations that need no request leave the outbox: a create later deleted before it
   * was ever sent, or a row's edits whose row is no longer in the store. (Those of a
   * resource or a field the server lacks were refused before the plan: `refuseLocally`.)
   */
  private async discardCancelled(ops: StoredOperation[], planned: UploadRequest[]): Promise<void> {
    const sent = new Set(planned.flatMap((r) => r.opIDs));
    const cancelled = ops.filter((o) => !sent.has(o.opID) && o.state === "pending");
    if (cancelled.length === 0) return;
    await this.store.transaction((tx) => {
      for (const op of cancelled) tx.objectStore(stores.OUTBOX).delete(op.sequence);
    });
  }

  private async createBecameUpdate(request: UploadRequest): Promise<void> {
    await this.store.transaction(async (tx) => {
      const ops = await this.opsOf(tx, request);
      const fields = [...new Set(ops.flatMap((o) => o.fields))];
      for (const op of ops) {
        if (op.kind === "create") { op.kind = "update"; op.fields = fields; }
        tx.objectStore(stores.OUTBOX).put(op);
      }
    });
  }

  /**
   * Rows created locally under a row whose create the server refused can never reach
   * it: they are refused at once (424 parent_rejected) and leave the store, and the rows
   * under them too, by the references of GET /v1 (FerryKit's rejectDependants).
   */
  private async rejectDependants(resource: string, id: string): Promise<void> {
    const schema = await this.loadSchema();
    const events: SyncEvent[] = [];
    await this.store.transaction(async (tx) => {
      const rows = tx.objectStore(stores.ROWS), outbox = tx.objectStore(stores.OUTBOX);
      const parents: [string, string][] = [[resource, id]];
      for (let next = parents.pop(); next; next = parents.pop()) {
        const [parent, parentID] = next;
        for (const child of schema) {
          for (const column of child.columns.filter((c) => c.references === parent)) {
            const candidates: { id: string; data: RowData }[] = await req(rows.index("resource").getAll(child.name));
            for (const row of candidates.filter((r) => r.data[column.name] === parentID)) {
              const ops: StoredOperation[] = await req(outbox.index("row").getAll([child.name, row.id]));
              if (!ops.some((o) => o.kind === "create" && o.state !== "rejected")) continue;
              const problem = { code: "parent_rejected", status: 424, field: column.name,
                                detail: `the ${parent} row ${parentID} it belongs to was refused by the server` };
              for (const op of ops.filter((o) => o.state !== "rejected")) {
                op.state = "rejected";
                op.lastError = problem;
                outbox.put(op);
              }
              rows.delete([child.name, row.id]);
              events.push({ type: "rejected", resource: child.name, id: row.id, status: 424, problem });
              parents.push([child.name, row.id]);
            }
          }
        }
      }
    });
    for (const e of events) this.emit(e);
  }

  /**
   * A write group as one POST /v1/batch: the server applies all of it or none. Its key
   * is "batch-" and the digest of every op id, resent byte for byte until answered.
   */
  private async sendBatch(requests: UploadRequest[]): Promise<"ok" | "again" | "wait"> {
    const opIDs = requests.flatMap((r) => r.opIDs);
    const idempotencyKey = "batch-" + digest(opIDs.map((id) => id.toLowerCase()).sort().join(","));
    const key = `sent:${idempotencyKey}`;
    type Http = { method: string; path: string; body?: unknown; headers: Record<string, string> };
    const sent = await this.store.state<Http>(key);
    const http: Http = sent ?? {
      method: "POST", path: "/v1/batch", headers: { "Idempotency-Key": idempotencyKey },
      body: {
        operations: requests.map((r) => {
          const single = httpRequest(r);
          const headers = Object.fromEntries(Object.entries(single.headers).filter(([k]) => k !== "Idempotency-Key"));
          const op: Record<string, unknown> = { method: single.method, path: single.path };
          if (Object.keys(headers).length) op.headers = headers;
          if (single.body !== undefined) op.body = single.body;
          return op;
        }),
      },
    };
    if (!sent) await this.store.setState(key, http);
    for (const r of requests) await this.markSent(r);
    const { outcome, res, answer } = await this.exchange(http);
    if (res && !(res.status === 409 && answer?.code === "idempotency_key_in_use")) await this.store.transaction((tx) => tx.objectStore(stores.STATE).delete(key));
    const index: number | null = typeof answer?.operation_index === "number" && answer.operation_index < requests.length ? answer.operation_index : null;
    const step = this.retry.step(outcome, this.attempt);
    const refuseAll = async (except: number | null) => {
      for (const [i, r] of requests.entries()) {
        if (i === except) continue;
        await this.setOps(r, "rejected", answer);
        await this.rollBack(r);
        this.emit({ type: "rejected", resource: r.resource, id: r.rowID, status: res?.status ?? 0, problem: answer });
      }
      for (const r of requests) if (r.action === "create") await this.rejectDependants(r.resource, r.rowID);
    };
    switch (step.step) {
      case "success": {
        const results = answer?.results;
        if (!Array.isArray(results) || results.length !== requests.length) {
          for (const r of requests) await this.setOps(r, "pending");
          return "wait";
        }
        this.attempt = 0;
        for (const [i, r] of requests.entries()) await this.settle(r, results[i]?.body ?? null);
        return "ok";
      }
      case "retry": case "refreshToken": case "pause":
        this.attempt++;
        for (const r of requests) await this.setOps(r, "pending");
        this.nextDelay = step.step === "retry" ? step.after : 0;
        return "wait";
      case "merge":
        if (index === null || !answer?.current) { await refuseAll(null); return "ok"; }
        for (const r of requests) await this.setOps(r, "pending");
        await this.applyPage([{ resource: requests[index].resource, data: answer.current }], null);
        return "again";
      case "tombstone":
        if (index !== null) {
          const r = requests[index];
          await this.applyPage([{ resource: r.resource, data: { ...(answer ?? {}), id: r.rowID, is_deleted: true, revoked: false } }], null);
        }
        await refuseAll(index);
        return "again";
      default:
        await refuseAll(null);
        return "again";
    }
  }

  /** Seconds the last round asked to wait before the next upload. */
  nextDelay = 0;

  private async setOps(request: Pick<UploadRequest, "resource" | "rowID" | "opIDs">, state: "pending" | "rejected", problem?: unknown): Promise<void> {
    await this.store.transaction((tx) => this.setOpsIn(tx, request, state, problem));
  }

  private async setOpsIn(tx: IDBTransaction, request: Pick<UploadRequest, "resource" | "rowID" | "opIDs">, state: "pending" | "rejected", problem?: unknown): Promise<void> {
    for (const op of await this.opsOf(tx, request)) {
      op.state = state;
      if (problem !== undefined) op.lastError = problem;
      tx.objectStore(stores.OUTBOX).put(op);
    }
  }

  /** The server took the request: its operations leave, its answer becomes the base (and the row, if no later edit waits). */
  private async settle(request: UploadRequest, answer: any): Promise<void> {
    await this.store.transaction((tx) => this.settleIn(tx, request, answer));
    this.emit({ type: "changed", resources: [request.resource] });
  }

  private async settleIn(tx: IDBTransaction, request: UploadRequest, answer: any): Promise<void> {
    const outbox = tx.objectStore(stores.OUTBOX);
    for (const op of await this.opsOf(tx, request)) outbox.delete(op.sequence);
    const later: StoredOperation[] = await req(outbox.index("row").getAll([request.resource, request.rowID]));
    const row = answer && typeof answer === "object" && !Array.isArray(answer) && answer.id !== undefined ? answer as RowData : null;
    if (!row || row["is_deleted"] === true || request.action === "delete") {
      tx.objectStore(stores.BASES).delete([request.resource, request.rowID]);
      return;
    }
    // A replayed answer may be older than what the feed brought meanwhile: keep the newer.
    const revision = typeof row["revision"] === "number" ? row["revision"] : -1;
    const stored = await req(tx.objectStore(stores.ROWS).get([request.resource, request.rowID]));
    const base = await req(tx.objectStore(stores.BASES).get([request.resource, request.rowID]));
    if (later.length === 0) {
      // Nothing left to send: the row becomes the newest server version known. A
      // replayed answer (the first send's) may be older than the base a merge kept
      // meanwhile; the merged local row's own values are settled and the server's win.
      tx.objectStore(stores.BASES).delete([request.resource, request.rowID]);
      const newest = base && base.revision > revision ? base.row : row;
      const have = typeof stored?.data?.revision === "number" ? stored.data.revision : -1;
      const newestRevision = typeof newest["revision"] === "number" ? newest["revision"] : -1;
      if (newestRevision >= have || newest === base?.row) {
        tx.objectStore(stores.ROWS).put(this.store.record(request.resource, request.rowID, newest));
      }
    } else if (!base || revision > base.revision) {
      tx.objectStore(stores.BASES).put({ resource: request.resource, id: request.rowID, revision, row });
    }
  }

  /**
   * A store that never synced fills itself from Index pages, then follows the feed from
   * the cursor taken before the first page (`since=now`): a row changed meanwhile comes
   * through both and applies by revision. Pages are applied as they come, so a tab closed
   * midway starts over with what it has kept (rows apply by revision).
   */
  async initialSync(): Promise<void> {
    const useWorker = this.options.initialSyncWorker ?? (!this.options.fetch && !this.inWorker);
    if (useWorker && typeof Worker !== "undefined" && await this.initialSyncInWorker()) return;
    const schema = await this.loadSchema();
    // The cursor taken before the first page is kept: an initial sync cut short starts
    // its pages over but not its cursor, or a row deleted in between would stay.
    let cursor = await this.store.state<string>("initialCursor");
    if (!cursor) {
      const now = await this.send("GET", "/v1/changes?since=now");
      if (!now.ok) throw await this.failure("GET", "/v1/changes?since=now", now);
      cursor = (await now.json()).cursor as string;
      await this.store.setState("initialCursor", cursor);
    }
    // A store that held rows when this run began (a restart after a 410, or a run cut
    // short before) is swept at the end: what no page brought is gone from the server.
    // A store that was empty holds at the end only what the pages brought.
    const hadRows = await req(this.store.tx("readonly").objectStore(stores.ROWS).count()) > 0;
    const brought = new Set<RowKey>();
    // Resources the server refused to list (400, 403, 404): skipped.
    const refused = new Set<string>();
    const limit = String(Math.min(1000, this.options.pageSize ?? 1000));
    const budget = this.options.initialSyncBudget ?? 0;
    let slice = Math.max(1, this.options.initialSyncSlice ?? 1000);
    const sizer = budget > 0 ? new SliceSizer(slice, budget) : null;
    // The tab's reads of rows (`get`, `all`, a `query` not from memory) heard when the last slice began.
    let reads = this.inWorker?.reads() ?? 0;
    for (const resource of schema) {
      let token: string | null = null, page = 1, pages = 1, busy = 0;
      // Public rows reach a store only by subscription: the Index leaves them out
      // (`public=false`), unless the server predates public rows and refuses the name.
      let privateOnly = true;
      // In id order, as FerryKit's: each slice is then a run of the store's keys, its
      // stored rows one range read (`storedRowsOf`), its writes at the key index's end.
      // (The Index's default order of a ranked resource is rank, then id: every slice
      // held rows scattered over the whole store.)
      const pageURL = () => {
        const query = new URLSearchParams({ limit, order: "id" });
        if (privateOnly) query.set("public", "false");
        if (token) { query.set("paging_token", token); query.set("page", String(page)); }
        return `/v1/${encodeURIComponent(resource.name)}?${query}`;
      };
      // The next page, asked for while this one is applied.
      let ahead: Promise<Response> | null = null;
      while (page <= pages) {
        const res = await (ahead ?? this.send("GET", pageURL()));
        ahead = null;
        // A server older than public rows refuses the name (a 400 that says so); it has
        // no public rows either, so its plain Index is the same (FerryKit's rule).
        const problem = res.status === 400 ? await res.clone().json().catch(() => null) : null;
        if (res.status === 400 && privateOnly && !token && typeof problem?.detail === "string" && problem.detail.includes("public")) {
          privateOnly = false;
          continue;
        }
        if ((res.status === 404 || res.status === 410) && token) {
          // The snapshot expired or memcached lost it: start this resource over.
          token = null; page = 1; pages = 1;
          continue;
        }
        if ((res.status === 503 || res.status === 429) && busy++ < 5) {
          // paging_unavailable (memcached could not keep the snapshot) or a limit: wait as asked, then ask again.
          const after = retryAfterSeconds(res.headers.get("Retry-After"), Date.now()) ?? 1;
          await sleep(Math.min(after, 30) * 1000, this.halt.signal);
          continue;
        }
        if (res.status === 400 || res.status === 403 || res.status === 404) {
          // The server will not list it (a resource this user may not list, a filter on
          // a column it does not have): nothing to download, as FerryKit's `skipStep`.
          // Its stored rows cannot be confirmed, so the sweep takes none of them for gone.
          refused.add(resource.name);
          break;
        }
        if (!res.ok) throw await this.failure("GET", pageURL(), res);
        busy = 0;
        const body = await res.json();
        token = body.paging?.token ?? null;
        pages = token ? body.paging.pages : 0;
        page++;
        if (page <= pages) {
          ahead = this.send("GET", pageURL());
          ahead.catch(() => {});  // (awaited at the top of the loop; not unhandled if this page's apply fails)
        }
        // In slices, each its own transaction: a read waits for the write transaction
        // over the rows to end, so a page of 1,000 in one would hold the app's reads
        // for its whole length. No cursor rides on these (it is saved at the end), and
        // rows apply by revision, so a slice is as safe as the page.
        const rows = (body.data as RowData[]).map((data) => ({ resource: resource.name, data }));
        if (hadRows) {
          for (const { data } of rows) {
            const id = typeof data.id === "number" ? String(data.id) : data.id;
            if (typeof id === "string") brought.add(rowKeyOf(resource.name, id));
          }
        }
        for (let i = 0; i < rows.length;) {
          // Stopped: no slice more (the one in progress has committed; the cursor taken
          // first is kept, so a restart starts the pages over from it).
          this.throwIfHalted();
          // The tab read rows from IndexedDB since the last slice began: a read waits for
          // the write transaction in progress, so slices are small while the app reads
          // (`readerSlice`), and as long again once it has stopped.
          const readNow = this.inWorker?.reads() ?? 0;
          const size = readNow !== reads ? Math.min(slice, readerSlice) : slice;
          reads = readNow;
          const part = rows.slice(i, i + size);
          i += part.length;
          const started = performance.now();
          const timing: SliceTiming = {};
          await this.applyPage(part, null, undefined, false, timing);
          // Sized by the transaction's running time: not the wait before it started
          // (behind the app's reads), which a bigger slice would not add to.
          if (sizer && size === slice) slice = sizer.record(part.length, performance.now() - (timing.started ?? started));
        }
      }
    }
    this.throwIfHalted();
    // The sweep and the cursor in one transaction: a run cut short before it commits
    // starts its pages over and sweeps again.
    const removed = await this.store.transaction(async (tx) => {
      const gone = hadRows ? await this.sweepUnconfirmed(tx, new Set(schema.map((r) => r.name).filter((name) => !refused.has(name))), brought) : [];
      for (const [resource, id] of gone) this.store.noteRow(tx, resource, id, null);
      tx.objectStore(stores.STATE).put(cursor, "cursor");
      tx.objectStore(stores.STATE).delete("initialCursor");
      return gone;
    }, { noteRows: true });
    for (const [resource, id] of removed) {
      this.emit({ type: "removed", resource, id, revoked: false, discardedEdits: false, localVersion: null });
    }
    if (removed.length) this.emit({ type: "changed", resources: [...new Set(removed.map(([resource]) => resource))] });
  }

  /**
   * The end of an initial sync over a store that held rows: FerryKit's
   * `finishInitialSync`. A row of a listed resource that no page brought, that no
   * subscription holds and that has no edit waiting is gone from the server (deleted,
   * or its access lost, before the cursor the feed now follows from, which will not say
   * so): it leaves the store, with its base. Returns what left.
   */
  private async sweepUnconfirmed(tx: IDBTransaction, listed: Set<string>, brought: Set<RowKey>): Promise<[string, string][]> {
    const rows = tx.objectStore(stores.ROWS), outbox = tx.objectStore(stores.OUTBOX), state = tx.objectStore(stores.STATE);
    const [keys, subscribedList, heldByDefault] = await Promise.all([
      req(rows.getAllKeys()) as Promise<IDBValidKey[]>,
      req(state.get("subscriptions")),
      req(state.get("held:")) as Promise<RowKey[] | undefined>,
    ]);
    const streams = subscriptionsOf(subscribedList).map((s) => s.stream);
    const bySubscription = (await Promise.all(streams.map((s) => req(state.get(`held:${s}`))))).map((h) => (h ?? []) as RowKey[]);
    const stored = (keys as [string, string][]).filter(([resource]) => listed.has(resource)).map(([resource, id]) => rowKeyOf(resource, id));
    const candidates = unconfirmed(stored, brought, bySubscription);
    const waiting = new Set<RowKey>();
    const ops = await Promise.all(candidates.concat(heldByDefault ?? []).map((key) => {
      const [resource, id] = key.split("\u0000");
      return req(outbox.index("row").getAll([resource, id])) as Promise<StoredOperation[]>;
    }));
    candidates.concat(heldByDefault ?? []).forEach((key, i) => { if (ops[i].some((o) => o.state !== "rejected")) waiting.add(key); });
    const out = sweep(candidates, brought, bySubscription, heldByDefault ?? [], (key) => waiting.has(key));
    const removed: [string, string][] = [];
    for (const key of out.remove) {
      const [resource, id] = key.split("\u0000");
      rows.delete([resource, id]);
      tx.objectStore(stores.BASES).delete([resource, id]);
      removed.push([resource, id]);
    }
    if (heldByDefault) state.put(out.heldByDefault, "held:");
    return removed;
  }

  /**
   * The initial sync in a dedicated Worker (src/initialsync-worker.ts), which runs this
   * engine's own `initialSync` on the same IndexedDB store: its events are emitted here
   * (and so reach every tab), the token provider is asked from here, rows it deferred
   * (local edits waiting, a resolver) are applied here once it is done. Runs inside the
   * round, so under the round's Web Lock; a closed tab ends the Worker with it. False
   * when the Worker could not start (its script missing, a policy): the caller does it.
   * `stop()` tells the Worker to stop: it aborts its fetches, lets the slice it is
   * writing commit, closes its store and says so; only then is it terminated and the
   * round ends (SyncStopped), so nothing of it writes after `stop()` resolves.
   */
  private initialSyncInWorker(): Promise<boolean> {
    let worker: Worker;
    this.throwIfHalted();
    try {
      worker = new Worker(new URL("./initialsync-worker.js", import.meta.url), { type: "module" });
    } catch {
      return Promise.resolve(false);
    }
    const halt = this.halt.signal;
    // Its posts on the tabs' channel are passed over here: it sends this tab its commits
    // cut to the keys this tab's cache holds (told as they change), and its events.
    const name = crypto.randomUUID();
    this.store.passOver(name);
    return new Promise((resolve, reject) => {
      let started = false;
      // A Worker that does not answer the stop (it cannot, short of a bug) is ended
      // anyway: terminating it closes its connection, which aborts a transaction not yet
      // committed (IndexedDB's rule for a connection closed abnormally).
      let deadline: ReturnType<typeof setTimeout> | null = null;
      const end = () => {
        worker.onmessage = null; worker.onerror = null; worker.terminate();
        this.store.onRead = null;
        if (this.store.cache) this.store.cache.onKeys = null;
        halt.removeEventListener("abort", onStop);
        if (deadline !== null) clearTimeout(deadline);
      };
      const onStop = () => {
        if (!started) { end(); reject(new SyncStopped()); return; }
        worker.postMessage({ type: "stop" });
        deadline = setTimeout(() => { end(); reject(new SyncStopped()); }, 10_000);
      };
      halt.addEventListener("abort", onStop);
      if (halt.aborted) onStop();
      worker.onerror = (e) => {
        e.preventDefault();
        end();
        if (started) reject(new Error(`the initial sync's Worker failed: ${e.message}`));
        else resolve(false);
      };
      worker.onmessage = async (m: MessageEvent) => {
        const message = m.data;
        switch (message?.type) {
          case "ready": {
            started = true;
            worker.postMessage({
              type: "start", name: this.store.name, baseURL: this.baseURL, token: this.token,
              pageSize: this.options.pageSize, initialSyncSlice: this.options.initialSyncSlice, initialSyncBudget: this.options.initialSyncBudget,
              defer: Object.keys(this.options.resolvers ?? {}), worker: name, keys: this.store.cache?.keys() ?? [],
            });
            if (this.store.cache) this.store.cache.onKeys = (keys) => worker.postMessage({ type: "keys", keys });
            // One message per task however many reads start in it.
            let told = false;
            this.store.onRead = () => {
              if (told) return;
              told = true;
              queueMicrotask(() => { told = false; worker.postMessage({ type: "read" }); });
            };
            break;
          }
          case "commit":
            // A slice committed, cut to this tab's keys: into its cache (before its "changed" event, sent after it).
            this.store.heard(message.commit);
            break;
          case "event":
            // The Worker told the other tabs itself.
            this.emit(message.event as SyncEvent, false);
            break;
          case "token":
            if (halt.aborted) {
              worker.postMessage({ type: "token", id: message.id, error: "stopped" });
              break;
            }
            try {
              const token = await this.options.token(message.refresh === true);
              this.token = token;
              worker.postMessage({ type: "token", id: message.id, token });
            } catch (e) {
              worker.postMessage({ type: "token", id: message.id, error: String((e as Error)?.message ?? e) });
            }
            break;
          case "done":
            end();
            try {
              if (message.deferred.length) await this.applyPage(message.deferred, null);
              resolve(true);
            } catch (e) {
              reject(e);
            }
            break;
          case "error":
            end();
            reject(message.paused ? new SyncPaused(message.message) : halt.aborted ? new SyncStopped()
              : message.network ? new NetworkError(message.network.method, message.network.url, message.network.cause)
              : message.http ? new HttpError(message.http.method, message.http.url, message.http.status, message.http.problem)
              : new Error(message.message));
            break;
        }
      };
    });
  }

  /** Follows the changes feed from the saved cursor until it has no more; `wait` > 0 long-polls. */
  async download(wait: number, signal?: AbortSignal): Promise<void> {
    let restarted = false;
    for (;;) {
      if ((await this.store.state<string | null>("cursor")) == null && this.options.initialSyncByIndex !== false) {
        await this.initialSync();
      }
      const cursor = await this.store.state<string>("cursor");
      const query = new URLSearchParams({ limit: String(this.options.limit ?? 500) });
      if (cursor) query.set("since", cursor);
      if (wait > 0) query.set("wait", String(wait));
      const res = await this.send("GET", `/v1/changes?${query}`, undefined, {}, wait > 0 ? signal : undefined);
      if (res.status === 410) {
        await this.store.setState("cursor", null);
        // The cursor the restart took is already behind the purge horizon (the server
        // moved it past a transaction still running): FerryKit's rule, the round ends
        // and the next starts over again, rather than initial syncs back to back.
        if (restarted) throw new Error("GET /v1/changes: 410 cursor_expired right after an initial sync");
        restarted = true;
        continue;
      }
      if (!res.ok) throw await this.failure("GET", `/v1/changes?${query}`, res);
      const page = await res.json();
      await this.applyPage(page.changes, page.cursor);
      if (!page.has_more) return;
      wait = 0;
    }
  }

  /** False once the server (or a proxy) answered the event stream with something else: long poll. */
  private useStream = true;

  /**
   * Continuous mode's live feed: `GET /v1/changes` with `Accept: text/event-stream`,
   * read through `fetch` (an `EventSource` cannot send the `Authorization` header a
   * Ferry token or a JWT needs; the wire format is the same). The server sends the page
   * there is now, then one `changes` event per page as commits enter the feed; each is
   * applied with its cursor as a polled page is. Resolves when the server ends the stream
   * (`live.max_stream_seconds`, shutdown): the caller reconnects from the saved cursor,
   * which is the last event's id.
   */
  private async stream(signal: AbortSignal): Promise<void> {
    if (this.options.live === "poll") this.useStream = false;
    if (!this.useStream) return this.download(20, signal);
    const cursor = await this.store.state<string>("cursor");
    if (cursor == null) return this.download(0);
    const query = new URLSearchParams({ limit: String(this.options.limit ?? 500), since: cursor });
    const res = await this.send("GET", `/v1/changes?${query}`, undefined, { Accept: "text/event-stream" }, signal);
    if (res.status === 410) {
      await this.store.setState("cursor", null);
      return;
    }
    if (res.status === 429 || res.status === 503) {
      this.nextDelay = retryAfterSeconds(res.headers.get("Retry-After"), Date.now()) ?? 1;
      return;
    }
    if (!res.ok) throw await this.failure("GET", `/v1/changes?${query}`, res);
    if (!(res.headers.get("Content-Type") ?? "").startsWith("text/event-stream") || !res.body) {
      // Answered as a poll (a proxy that strips the Accept header): apply it, long-poll from now on.
      this.useStream = false;
      const page = await res.json();
      await this.applyPage(page.changes, page.cursor);
      return;
    }
    const parser = new EventStreamParser();
    const reader = res.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      for (const event of parser.push(value, done)) {
        if (event.type === "changes") {
          const page = JSON.parse(event.data);
          await this.applyPage(page.changes, page.cursor);
          this.failures = 0;
        } else if (event.type === "problem") {
          const problem = JSON.parse(event.data);
          if (problem?.status === 410) { await this.store.setState("cursor", null); return; }
          throw new Error(`the event stream ended with ${problem?.status} ${problem?.code}`);
        }
      }
      if (done) return;
    }
  }

  /** False once the server answered `POST /v1/changes/wait` with 404/405 (it predates the route) or 400 (it refused the body). */
  private useWait = true;

  /** The most streams one wait may name: the server's `live.max_wait_streams`, from `GET /v1`. */
  private waitCap = defaultWaitCap;

  /**
   * Continuous mode's live step for a device with subscriptions: `POST /v1/changes/wait`
   * on the default stream's cursor and every subscription's (src/live.ts; `subscriptions`
   * in the queue's order, so the default stream first, then by priority), in waits of
   * at most the server's `live.max_wait_streams` streams sent at once (at most
   * `maxWaits`; streams beyond those are fetched after every answer), held until one of
   * them has news (or `wait` runs out). The first answer ends the others; then a
   * `GET /v1/changes` of just the streams it names: "followed" (the next turn waits
   * again, with no round). "fallBack" when it cannot wait (the caller runs the default
   * stream's own live step), "later" when the server asked to come back later (429,
   * 503: `nextDelay`).
   */
  private async waitAll(subscriptions: string[], signal: AbortSignal): Promise<"followed" | "fallBack" | "later"> {
    await this.loadSchema();  // (the cap, with the resources; loaded by the round before)
    const cursors = await Promise.all(subscriptions.map((s) => this.store.state<string | null>(`cursor:${s}`)));
    const plan = waitPlan(await this.store.state<string | null>("cursor"), subscriptions.map((s, i) => [s, cursors[i]]), this.waitCap, 20);
    if (plan.bodies.length === 0) return "fallBack";
    const { answer: res } = await firstAnswer(plan.bodies, (body, one) => this.send("POST", "/v1/changes/wait", body, {}, one), signal);
    if (res.status === 404 || res.status === 405 || res.status === 400) {
      // A server without the route (or that refuses the body, e.g. a cap lowered since
      // GET /v1 said it): the default stream live as before, subscriptions at each round.
      await res.text().catch(() => "");
      this.useWait = false;
      return "fallBack";
    }
    if (res.status === 429 || res.status === 503) {
      this.nextDelay = retryAfterSeconds(res.headers.get("Retry-After"), Date.now()) ?? 1;
      return "later";
    }
    if (!res.ok) throw await this.failure("POST", "/v1/changes/wait", res);
    const follow = afterWait(await res.json(), subscriptions);
    if (follow.default) await this.download(0);
    const streams = new Set([...follow.streams, ...plan.unwaited]);
    await this.followSubscriptions(subscriptions.filter((s) => streams.has(s)), true);
    this.failures = 0;
    return "followed";
  }

  /**
   * Applies server rows and saves the cursor, in one transaction; `end` (a stream's page
   * that reached its end) marks the subscription synced in it too.
   */
  async applyPage(changes: { resource: string; data: RowData }[], cursor: string | null, stream?: string, end = false, timing?: SliceTiming): Promise<void> {
    const events: SyncEvent[] = [];
    const touched = new Set<string>();
    // The subscriptions a revoked entry of the default stream queued again (`spare`).
    const restarted: string[] = [];
    await this.store.transaction(async (tx) => {
      const rows = tx.objectStore(stores.ROWS), bases = tx.objectStore(stores.BASES), outbox = tx.objectStore(stores.OUTBOX);
      const state = tx.objectStore(stores.STATE);
      // Which rows each subscription brought (`held:<stream>`), and which of those the
      // default stream (or the device itself) holds too (`held:`): unsubscribing drops
      // only what no one else holds. Nothing to keep while there is no subscription.
      // What each entry is decided on is read for many entries at once (an await per
      // read would cost a round trip to the browser's storage each: an initial sync
      // of 100,000 rows went at 700 rows a second): runs of entries with no row twice,
      // each run's reads in parallel, then its decisions and writes in order. The first
      // run's rows are read with the state below, in one round trip: the transaction
      // holds the app's reads for as long as it runs.
      const entries = changes.flatMap(({ resource, data }) => {
        const id = typeof data.id === "number" ? String(data.id) : data.id;
        return typeof id === "string" ? [{ resource, id, data }] : [];
      });
      const runs: (typeof entries)[] = [];
      for (let start = 0; start < entries.length;) {
        const keys = new Set<string>();
        let end = start;
        while (end < entries.length && !keys.has(rowKeyOf(entries[end].resource, entries[end].id))) keys.add(rowKeyOf(entries[end].resource, entries[end].id)), end++;
        runs.push(entries.slice(start, end));
        start = end;
      }
      const rowsOf = (run: typeof entries) => storedRowsOf(rows, run);
      // The state is asked for first: its answer tells when the transaction started
      // (`timing`), after whatever it queued behind (the app's reads in progress).
      const subscribedRead = req(state.get("subscriptions"));
      if (timing) subscribedRead.then(() => { timing.started = performance.now(); }, () => {});
      const stateReads = Promise.all([subscribedRead, req(outbox.count()), req(bases.count())]);
      const firstRows = runs.length ? rowsOf(runs[0]) : Promise.resolve([]);
      firstRows.catch(() => {});  // (awaited below, unless unsubscribed meanwhile)
      const [subscribed, opCount, baseCount] = await stateReads;
      // No base kept (as during an initial sync, no local edit waiting): no row's base to delete.
      let anyBases = baseCount > 0;
      // Which rows each subscription brought (`held:<stream>`), and which of those the
      // default stream (or the device itself) holds too (`held:`): unsubscribing drops
      // only what no one else holds. Nothing to keep while there is no subscription.
      // Every subscription, those unsubscribed within their TTL too: their rows stay theirs.
      const records = subscriptionsOf(subscribed);
      const subscriptions = records.map((s) => s.stream);
      if (stream !== undefined && !active(records).some((s) => s.stream === stream)) return;  // unsubscribed meanwhile
      if (stream !== undefined && end && !records.find((s) => s.stream === stream)?.synced) state.put(markedSynced(records, stream), "subscriptions");
      const held = new Map<string, Set<string>>();
      const [heldBy, heldByDefaultList, unconfirmedList] = await Promise.all([
        Promise.all(subscriptions.map((s) => req(state.get(`held:${s}`)))),
        subscriptions.length ? req(state.get("held:")) : undefined,
        // After the stream's 410: the rows no page of its new download brought yet.
        stream !== undefined ? req(state.get(`unconfirmed:${stream}`)) as Promise<RowKey[] | undefined> : undefined,
      ]);
      subscriptions.forEach((s, i) => held.set(s, new Set(heldBy[i] ?? [])));
      const heldByDefault = new Set<string>(heldByDefaultList ?? []);
      // A revoked entry of the default stream for a row an active subscription holds
      // (issue 46, seed 1791; FerryKit's `sparingSubscribed`): the row stays, no longer the
      // default stream's, and each such subscription downloads its stream again from its
      // start (its rows unconfirmed, as after its 410; the round's queue runs it after the
      // default stream). Its stream may never revoke the row itself: a download from the
      // start after the revocation holds a cursor past it, and reads no revocations.
      let spared: Set<string> | null = null;
      if (stream === undefined && subscriptions.length && entries.some((e) => e.data["revoked"] === true)) {
        const out = spare(entries.filter((e) => e.data["revoked"] === true).map((e) => rowKeyOf(e.resource, e.id)), records, held);
        if (out.rows.length) {
          spared = new Set(out.rows);
          for (const key of out.rows) heldByDefault.delete(key);
          for (const s of out.restart) {
            state.put(null, `cursor:${s}`);
            state.put([...(held.get(s) ?? [])], `unconfirmed:${s}`);
          }
          state.put(markedRestarted(records, out.restart), "subscriptions");
          restarted.push(...out.restart);
        }
      }
      const arrived: { key: string; existed: boolean }[] = [];
      const anyOps = opCount > 0;
      for (const [r, run] of runs.entries()) {
        const [allOps, storedRows] = await Promise.all([
          Promise.all(run.map((e) => anyOps ? req(outbox.index("row").getAll([e.resource, e.id])) as Promise<StoredOperation[]> : [])),
          r === 0 ? firstRows : rowsOf(run),
        ]);
        const waitingOf = allOps.map((ops) => ops.filter((o) => o.state !== "rejected"));
        const needOf = run.map((e, i) => needs(e.data, waitingOf[i].length > 0));
        const storedBases = await Promise.all(run.map((e, i) => needOf[i].includes("base") ? req(bases.get([e.resource, e.id])) : undefined));
        for (const [i, { resource, id, data }] of run.entries()) {
          if (spared && data["revoked"] === true && spared.has(rowKeyOf(resource, id))) continue;
          if (this.inWorker?.defer.has(resource) && waitingOf[i].length > 0) {
            this.inWorker.deferred.push({ resource, data });
            continue;
          }
          if (subscriptions.length) arrived.push({ key: rowKeyOf(resource, id), existed: !!storedRows[i] });
          const waiting = waitingOf[i];
          const pending = waiting.length > 0;
          const need = needOf[i];
          const row = storedRows[i]?.data ?? null;
          // The server version local edits were made on: kept since the first edit, else
          // (no edit pending) the stored row itself, if the server has it.
          const base = need.includes("base")
            ? storedBases[i]?.row ?? (typeof row?.["revision"] === "number" ? row : null)
            : null;
          const dirty = new Set(waiting.flatMap((o) => o.fields));
          const decision = decide(data, { pending, base, row, dirty }, this.options.resolvers?.[resource]);
          switch (decision.decision) {
            case "ignore": break;
            case "apply": {
              const have = typeof row?.["revision"] === "number" ? row["revision"] as number : -1;
              if ((data.revision as number) > have) {
                const record = this.store.record(resource, id, data);
                rows.put(record);
                this.store.noteRow(tx, resource, id, record, storedRows[i]?.by ?? []);
              }
              if (anyBases) bases.delete([resource, id]);
              touched.add(resource);
              break;
            }
            case "keep": bases.put({ resource, id, revision: data.revision, row: data }); anyBases = true; break;
            case "merge": case "conflict":
              {
                const record = this.store.record(resource, id, decision.row);
                rows.put(record);
                this.store.noteRow(tx, resource, id, record, storedRows[i]?.by ?? []);
              }
              bases.put({ resource, id, revision: data.revision, row: data });
              anyBases = true;
              touched.add(resource);
              if (decision.decision === "conflict") events.push({ type: "conflict", resource, id, conflicts: decision.conflicts });
              break;
            case "remove":
              if (decision.problem) {
                for (const op of waiting) {
                  op.state = "rejected";
                  op.lastError = decision.problem;
                  outbox.put(op);
                }
              }
              rows.delete([resource, id]);
              this.store.noteRow(tx, resource, id, null, storedRows[i]?.by ?? []);
              if (anyBases) bases.delete([resource, id]);
              touched.add(resource);
              if (decision.event) events.push({ type: "removed", resource, id, ...decision.event.removed });
              break;
          }
        }
      }
      if (subscriptions.length) {
        for (const { key, existed } of arrived) {
          const bySubscription = [...held.values()].some((h) => h.has(key));
          if (stream === undefined) {
            if (bySubscription) heldByDefault.add(key);
          } else {
            // A row the device had before any subscription brought it stays when they go.
            if (existed && !bySubscription) heldByDefault.add(key);
            held.get(stream)?.add(key);
          }
        }
        if (stream !== undefined && unconfirmedList) {
          const left = new Set(unconfirmedList);
          for (const e of entries) left.delete(rowKeyOf(e.resource, e.id));
          if (!end) state.put([...left], `unconfirmed:${stream}`);
          else {
            // The restarted stream's end, with its cursor: what no page brought again leaves.
            for (const [resource, id] of await this.sweepRestart(tx, stream, [...left], held, heldByDefault)) {
              this.store.noteRow(tx, resource, id, null);
              touched.add(resource);
              events.push({ type: "removed", resource, id, revoked: false, discardedEdits: false, localVersion: null });
            }
            state.delete(`unconfirmed:${stream}`);
          }
        }
        if (stream !== undefined) state.put([...(held.get(stream) ?? [])], `held:${stream}`);
        state.put([...heldByDefault], "held:");
      }
      if (cursor !== null) state.put(cursor, stream === undefined ? "cursor" : `cursor:${stream}`);
      // Committed at once (no request follows the body); an initial sync's slice with
      // relaxed durability, which Chromium has had by default since 121 (strict, its
      // default before, took twice as long here): a slice lost to a crash carries no
      // cursor, and its page is fetched again (bench/web/README.md).
    }, { commit: true, durability: timing ? "relaxed" : undefined, noteRows: true });  // (`timing`: an initial sync's slice)
    for (const e of events) this.emit(e);
    if (touched.size) this.emit({ type: "changed", resources: [...touched] });
    for (const s of restarted) await this.announce(s);
    // A round runs the queue after the default stream; a live step (an event stream's
    // page) is cut short for a round, or the queue would wait for the stream's end.
    if (restarted.length && this.poll) this.kick();
  }

  /**
   * The end of a subscription's download after its 410: FerryKit's `sweepRestart`. Of
   * the rows it held that no page brought again (`left`), one another subscription or
   * the default stream holds stays and leaves this stream's list (`held`, changed in
   * place); one with edits waiting stays the stream's; the rest leaves the store with
   * its base. Returns what left.
   */
  private async sweepRestart(tx: IDBTransaction, stream: string, left: RowKey[], held: Map<string, Set<RowKey>>,
                             heldByDefault: Set<RowKey>): Promise<[string, string][]> {
    const rows = tx.objectStore(stores.ROWS), outbox = tx.objectStore(stores.OUTBOX);
    const facts = await Promise.all(left.map(async (key) => {
      const [resource, id] = key.split("\u0000");
      const [row, ops] = await Promise.all([req(rows.get([resource, id])), req(outbox.index("row").getAll([resource, id])) as Promise<StoredOperation[]>]);
      return [key, { exists: !!row, pending: ops.some((o) => o.state !== "rejected") }] as const;
    }));
    const fact = new Map(facts);
    const elsewhere = new Set(left.filter((key) => heldByDefault.has(key) || [...held].some(([s, h]) => s !== stream && h.has(key))));
    const out = restartSweep(left, new Set(), elsewhere, (k) => fact.get(k)?.pending ?? false, (k) => fact.get(k)?.exists ?? false);
    const keep = new Set(out.keep);
    const mine = held.get(stream);
    for (const key of left) if (!keep.has(key)) mine?.delete(key);
    return out.remove.map((key) => {
      const [resource, id] = key.split("\u0000");
      rows.delete([resource, id]);
      tx.objectStore(stores.BASES).delete([resource, id]);
      return [resource, id] as [string, string];
    });
  }

  /**
   * Continuous mode: a round, then the feed live until a kick, until `stop()`: an event
   * stream or a long poll of the default stream, or, for a device with subscriptions,
   * one wait on all its streams (`waitAll`).
   */
  start(): void {
    if (this.running) return;
    this.running = true;
    const loop = async () => {
      await this.resume();
      // This loop's own: a stop() then start() ends this loop even as another begins.
      const halt = this.halt.signal;
      // After a wait on every stream fetched what it named, the next turn waits again
      // with no round (nothing else changed; a local write kicks, which means a round).
      let waitAgain = false;
      while (this.running && !halt.aborted) {
        try {
          const round = !waitAgain;
          waitAgain = false;
          this.kicked = false;
          if (round) await this.sync();
          if (!this.running) break;
          if (this.failing) {
            this.failing = false;
            this.emit({ type: "recovered" });
          }
          // The round evicted what was due; the next eviction comes by the timer, with no round.
          await this.armEviction();
          // A write made during the round (its kick found no stream to close) goes now,
          // not when the stream ends.
          if (this.kicked) continue;
          const lock = typeof navigator !== "undefined" && navigator.locks;
          this.poll = new AbortController();
          const signal = this.poll.signal;
          const poll = async () => {
            // The queue of new subscriptions first, without waiting: one left for after the
            // wait would wait for its answer (up to 20 s, or the event stream's whole life).
            await this.pullQueue(new Set());
            // With subscriptions, one wait on every stream; without, the default stream's own.
            const subscriptions = this.useWait ? await this.streams() : [];
            if (subscriptions.length) {
              const waited = await this.waitAll(subscriptions, signal);
              if (waited !== "fallBack") return waited === "followed";
            }
            await (this.useStream ? this.stream(signal) : this.download(20, signal));
            return false;
          };
          const followed = await (lock ? navigator.locks.request(`ferry-sync:${this.store.name}`, { signal: halt }, poll) : poll());
          // A kick during the fetch after the wait (it had no request to cut short) still means a round.
          waitAgain = followed && !this.kicked;
          if (this.nextDelay > 0) await this.pause(this.nextDelay * 1000);
          else this.failures = 0;
          this.nextDelay = 0;
        } catch (e) {
          if (e instanceof SyncPaused) { this.running = false; break; }
          if (halt.aborted) break;
          // A kick (a local write) cut the long poll short: upload at once.
          if (this.poll?.signal.aborted) continue;
          const after = this.retry.backoff(Math.min(this.failures++, 6), Math.random);
          // Said, not swallowed: an app shows "offline" or the server's refusal.
          this.failing = true;
          this.emit(failedPass(e, after));
          await this.pause(after * 1000);
        } finally {
          this.poll = null;
        }
      }
    };
    void this.track(loop());
  }

  /** A kick came since the round began. */
  private kicked = false;

  /** The long poll in progress, which a local write cuts short. */
  private poll: AbortController | null = null;

  /**
   * Tells continuous mode there is something to upload now: the waiting long poll ends
   * and the next round starts. Every write of the store does it (another tab's through
   * its `written` broadcast); call it for anything else, such as the window's `online`.
   */
  kick(): void {
    this.kicked = true;
    this.poll?.abort();
    this.wake?.();
  }

  /** Rounds in a row that failed (no network, a 5xx): continuous mode backs off by them. */
  private failures = 0;
  /** An `error` event went since the last pass that succeeded: the next one says `recovered`. */
  private failing = false;
  private wake: (() => void) | null = null;

  /** Waits `ms`, or less when kicked (a local write, the browser back online). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() { clearTimeout(timer); resolve(); }
      this.wake = () => { this.wake = null; done(); };
    });
  }

  /**
   * Ends continuous mode and any round in progress (`sync()`, which rejects with
   * SyncStopped), an initial sync included: the open stream or long poll is closed,
   * every request aborted, the initial sync's Worker stopped, the Web Lock released.
   * Resolves once all of it has ended: from then on nothing of it writes to the store.
   * A later `sync()` or `start()` goes on from what was stored (an initial sync starts
   * its pages over, on the cursor it took first).
   */
  stop(): Promise<void> {
    this.running = false;
    this.disarmEviction();
    this.halt.abort();
    this.poll?.abort();
    this.wake?.();
    const ending: Promise<void> = Promise.allSettled([...this.inFlight, this.stopping]).then(() => {
      if (this.stopping === ending) this.stopping = null;
    });
    this.stopping = ending;
    return ending;
  }

  /** Rejected operations, for the app to show and clear. */
  async rejected(): Promise<StoredOperation[]> {
    return (await this.store.operations()).filter((o) => o.state === "rejected");
  }

  /** Forgets rejected operations once the app has shown them (all, or those of `opIDs`). */
  async clearRejected(opIDs?: string[]): Promise<void> {
    const forget = (await this.rejected()).filter((o) => !opIDs || opIDs.includes(o.opID));
    await this.store.transaction((tx) => {
      for (const op of forget) tx.objectStore(stores.OUTBOX).delete(op.sequence);
    });
  }
}

export class SyncPaused extends Error {}

/** The `error` event of a continuous-mode pass that failed with `e`, retried in `after` seconds. */
export function failedPass(e: unknown, after: number): Extract<SyncEvent, { type: "error" }> {
  const message = e instanceof Error ? e.message : String(e);
  const offline = e instanceof NetworkError;
  const status = e instanceof HttpError ? e.status : null;
  const url = e instanceof NetworkError || e instanceof HttpError ? e.url : null;
  return { type: "error", message, offline, status, url, retryInSeconds: after, error: e };
}

/** A round `stop()` ended before it was done. */
export class SyncStopped extends Error {
  constructor() {
    super("stopped");
    this.name = "SyncStopped";
  }
}

/** Waits `ms`, or until `signal` aborts (then throws SyncStopped). */
/**
 * The stored rows of `run` (rows with distinct keys), in its order. A run of one resource
 * in the store's key order, as an Index page's rows come (by id), is one range read: one
 * request for the slice, not one a row, which was most of a slice's running time. The
 * range may hold rows the run does not (made locally, or left out of the page); read up
 * to twice the run's length, and where it holds more, one get a row as before.
 */
async function storedRowsOf(rows: IDBObjectStore, run: { resource: string; id: string }[]): Promise<(StoredRow | undefined)[]> {
  const ordered = run.length > 1 && run.every((e, i) => e.resource === run[0].resource && (i === 0 || run[i - 1].id < e.id));
  if (ordered) {
    const limit = run.length * 2;
    const found: StoredRow[] = await req(rows.getAll(IDBKeyRange.bound([run[0].resource, run[0].id], [run[0].resource, run[run.length - 1].id]), limit));
    if (found.length < limit) {
      const byID = new Map(found.map((r) => [r.id, r]));
      return run.map((e) => byID.get(e.id));
    }
  }
  return Promise.all(run.map((e) => req(rows.get([e.resource, e.id]))));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) { reject(new SyncStopped()); return; }
    const timer = setTimeout(() => { signal.removeEventListener("abort", onAbort); resolve(); }, ms);
    function onAbort() { clearTimeout(timer); reject(new SyncStopped()); }
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/** The HTTP call of a bulk bundle: the array of items Ferry's bulk create, update or delete takes. */
function bulkRequest(call: UploadBundle): { method: string; path: string; body: unknown; headers: Record<string, string> } {
  const first = call.requests[0];
  const items = call.requests.map((r) => {
    switch (r.action) {
      case "create": return { ...(r.body ?? {}) };
      case "update": return { ...(r.body ?? {}), id: r.rowID, ...(r.baseRevision === null ? {} : { revision: r.baseRevision }) };
      case "delete": return { id: r.rowID, revision: r.baseRevision };
    }
  });
  const method = first.action === "create" ? "POST" : first.action === "update" ? "PATCH" : "DELETE";
  return { method, path: `/v1/${encodeURIComponent(first.resource)}`, body: items, headers: { "Idempotency-Key": call.idempotencyKey } };
}

/** The HTTP request of a planned upload, as FerryKit sends it (SyncEngine+Upload.swift). */
function httpRequest(request: UploadRequest): { method: string; path: string; body?: unknown; headers: Record<string, string> } {
  const row = `/v1/${encodeURIComponent(request.resource)}/${encodeURIComponent(request.rowID)}`;
  const headers: Record<string, string> = { "Idempotency-Key": request.idempotencyKey };
  switch (request.action) {
    case "create":
      return { method: "POST", path: `/v1/${encodeURIComponent(request.resource)}`, body: request.body, headers };
    case "update":
      if (request.baseRevision === null) return { method: "PATCH", path: row, body: request.body, headers: { ...headers, "If-Match": "*" } };
      return { method: "PATCH", path: row, body: { ...request.body, revision: request.baseRevision }, headers };
    case "delete":
      if (request.baseRevision === null) return { method: "DELETE", path: row, headers: { ...headers, "If-Match": "*" } };
      return { method: "DELETE", path: `${row}?revision=${request.baseRevision}`, headers };
  }
}

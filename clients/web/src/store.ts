// The IndexedDB store: rows, the outbox, the bases of local edits and the sync state.
// Every local write puts the row and its outbox operation in ONE IndexedDB transaction,
// and every feed page puts its rows and its cursor in one: a closed tab leaves both or
// neither. The decisions (merge, feed entries, plans) come from the pure modules.

import { RowData } from "./json.js";
import { PendingOperation, OperationKind, OutboxState, rowKeyOf } from "./planner.js";
import { Indexes, IndexKey, IndexValue, indexKeys, normalIndexes, sameIndexes } from "./indexes.js";
import { QueryCache, Commit, RowChange, packCommit } from "./querycache.js";
import { SchemaResource } from "./planner.js";
import { checkEdits } from "./schemacheck.js";

export interface StoredOperation extends PendingOperation {
  state: OutboxState;
  attempts: number;
  lastError?: unknown;
}

const ROWS = "rows", OUTBOX = "outbox", BASES = "bases", STATE = "state";
/** The state key of the commits' counter (src/querycache.ts). */
const SEQ = "seq";

function done(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error("transaction aborted"));
  });
}

export function req<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function uuid(): string {
  return crypto.randomUUID();
}

export interface StoreOptions {
  /**
   * Per resource, the fields the app reads rows by (`query`): `{ todos: ["list_id"] }`.
   * Kept in the store; left out, the store's own is used (the initial sync's Worker, a
   * tab that does not read by field). A declaration that differs from the store's
   * rewrites every row's keys once, at this `open`.
   */
  indexes?: Indexes;
  /**
   * @internal The initial sync's Worker: its name. No query cache, and nothing heard from
   * the tabs' channel; its commits and events are posted there marked with the name (its
   * own tab, which hears them from the Worker cut to its keys, passes them over).
   */
  worker?: string;
}

/** A stored row: its keys for `query` (`by`) beside its data. */
export interface StoredRow {
  resource: string;
  id: string;
  data: RowData;
  by?: [string, string, IndexValue][];
}

/** One tab's handle on the store; several tabs share the database. */
export class FerryStore {
  /** The fields rows are read by (`query`), the store's declaration. */
  indexes: Indexes = {};

  /**
   * The server's resources (`GET /v1`) once this tab's engine has read them (set by the
   * engine; null before): `write` then refuses an edit naming a resource or a field they
   * lack (`WriteRefused`, src/schemacheck.ts). Not kept in the store: one read by an
   * older session may lack what the server (and a newer app) has since added; an edit
   * written before the engine read it is checked at upload instead (a rejection).
   */
  schema: SchemaResource[] | null = null;

  /** This tab's answers of `query`, kept in step with every commit (src/querycache.ts). */
  readonly cache: QueryCache | null;
  /** The tabs' channel: commits, and the engine's events (`listen`, `broadcast`). */
  private channel: BroadcastChannel | null = null;
  private listeners = new Set<(message: unknown) => void>();
  /** The rows written by a transaction that tells them (`noteRows`), and the keys each had before (undefined: not known). */
  private noted = new WeakMap<IDBTransaction, { rows: RowChange[]; was: (IndexKey[] | undefined)[] }>();
  /** Initial syncs' Workers of this tab: their posts on the channel are passed over (`passOver`). */
  private own = new Set<string>();
  /** IndexedDB reads of rows started (`get`, `all`, a `query` not answered from memory), and those not yet answered. */
  readonly reads = { started: 0, waiting: 0 };
  /** @internal Told when a read of rows starts (the initial sync's Worker then writes in smaller slices). */
  onRead: (() => void) | null = null;
  /** Per read-write transaction: resolved once its number is taken (`stamp`). */
  private stamped = new WeakMap<IDBTransaction, Promise<unknown>>();
  /**
   * @internal Told of each commit of this store, with the keys each row had before it
   * (the initial sync's Worker sends its tab the rows of the tab's keys: `commitFor`).
   */
  onCommit: ((commit: Commit, was: (IndexKey[] | undefined)[] | null) => void) | null = null;

  private constructor(readonly db: IDBDatabase, readonly name: string, private readonly worker?: string) {
    // Without a channel the other tabs' commits would not be heard: no cache then.
    const channel = typeof BroadcastChannel !== "undefined";
    this.cache = channel && worker === undefined ? new QueryCache() : null;
    if (channel) this.channel = new BroadcastChannel(`ferry:${name}`);
    if (this.channel && worker === undefined) {
      this.channel.onmessage = (m) => {
        const message = m.data as { type?: string; commit?: Commit; stamped?: boolean; resources?: string[]; from?: string };
        // This tab's Worker: heard from it already (its commits cut to this tab's keys, its events).
        if (message?.from !== undefined && this.own.has(message.from)) return;
        if (message?.type === "commit" && message.commit) { this.cache?.apply(message.commit); return; }
        // A tab of an older FerryWeb announces no commits: what its events say changed is dropped.
        if (message?.stamped !== true && (message?.type === "changed" || message?.type === "written" || message?.type === "removed")) {
          this.cache?.dropResources(message.type === "changed" ? message.resources : undefined);
        }
        const { stamped: _stamped, from: _from, ...event } = message as Record<string, unknown>;
        for (const l of this.listeners) l(event);
      };
    }
  }

  /** Told after each of this tab's `write` and `writeMany` commits: its engine uploads. */
  private writeListeners = new Set<() => void>();

  /**
   * @internal Hears this tab's own writes once committed (the engine starts their
   * upload); the other tabs hear each as a `written` event (their syncing engine uploads).
   */
  onWrite(listener: () => void): () => void {
    this.writeListeners.add(listener);
    return () => this.writeListeners.delete(listener);
  }

  /** Hears what other tabs send on the channel (the engine's events). */
  listen(listener: (message: unknown) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Sends an event to the other tabs (marked: sent by a FerryWeb that announces its commits). */
  broadcast(event: object): void {
    this.channel?.postMessage(this.worker === undefined ? { ...event, stamped: true } : { ...event, stamped: true, from: this.worker });
  }

  /**
   * A commit of this tab's initial sync Worker, cut to this tab's keys (`commitFor`): into
   * its cache. The Worker announced it to the other tabs itself.
   */
  heard(commit: Commit): void {
    this.cache?.apply(commit);
  }

  /** @internal What the Worker `name` (this tab's) posts on the channel is passed over: the tab hears it from the Worker. */
  passOver(name: string): void {
    this.own.add(name);
  }

  /**
   * Opens (or makes) the database `ferry:<name>`. Version 2 added the index `by` on the
   * rows (`query`); a tab still open on version 1 (an older FerryWeb) holds the upgrade
   * until it is closed or reloaded.
   */
  static async open(name: string, options: StoreOptions = {}): Promise<FerryStore> {
    const given = options.indexes === undefined ? undefined : normalIndexes(options.indexes);
    const open = indexedDB.open(`ferry:${name}`, 2);
    open.onupgradeneeded = (event) => {
      const db = open.result;
      if (event.oldVersion < 1) {
        const rows = db.createObjectStore(ROWS, { keyPath: ["resource", "id"] });
        rows.createIndex("resource", "resource");
        const outbox = db.createObjectStore(OUTBOX, { keyPath: "sequence", autoIncrement: true });
        outbox.createIndex("row", ["resource", "rowID"]);
        db.createObjectStore(BASES, { keyPath: ["resource", "id"] });
        db.createObjectStore(STATE);
      }
      // Each row's `[resource, field, value]` keys; a row with none is not in it.
      if (event.oldVersion < 2) open.transaction!.objectStore(ROWS).createIndex("by", "by", { multiEntry: true });
    };
    const store = new FerryStore(await req(open), name, options.worker);
    const stored = normalIndexes(await store.state("indexes"));
    if (given === undefined || sameIndexes(given, stored)) store.indexes = stored;
    else await store.reindex(given);
    return store;
  }

  /**
   * Every row's keys rewritten for `indexes`, and the declaration stored, in one
   * transaction: a `query` never sees keys of two declarations. Rows are read 1,000 at
   * a time (an await a row would be a round trip to the browser's storage each).
   */
  private async reindex(indexes: Indexes): Promise<void> {
    const tx = this.tx("readwrite");
    const rows = tx.objectStore(ROWS);
    let after: IDBValidKey | null = null;
    for (;;) {
      const batch: StoredRow[] = await req(rows.getAll(after === null ? null : IDBKeyRange.lowerBound(after, true), 1000));
      for (const row of batch) rows.put(recordOf(indexes, row.resource, row.id, row.data));
      if (batch.length < 1000) break;
      const last = batch[batch.length - 1];
      after = [last.resource, last.id];
    }
    tx.objectStore(STATE).put(indexes, "indexes");
    await done(tx);
    this.indexes = indexes;
  }

  /** The record of a row as stored: its data and its keys for `query`. */
  record(resource: string, id: string, data: RowData): StoredRow {
    return recordOf(this.indexes, resource, id, data);
  }

  /**
   * The rows of `resource` whose `field` is `value` (a declared field: `indexes`), in id
   * order: one request, in a read-only transaction of the rows alone (it waits for
   * no write that does not touch them: a cursor saved, an outbox entry marked sent).
   */
  async query(resource: string, field: string, value: IndexValue): Promise<RowData[]> {
    if (!this.indexes[resource]?.includes(field)) {
      throw new TypeError(`${resource}.${field} is not indexed: FerryStore.open(name, { indexes: { ${resource}: ["${field}"] } })`);
    }
    const kept = this.cache?.get(resource, field, value);
    if (kept) return structuredClone(kept);
    // The rows and the commit they are the state of, in one transaction.
    const [found, seq] = await this.reading(() => {
      const tx = this.db.transaction([ROWS, STATE], "readonly");
      return Promise.all([
        req(tx.objectStore(ROWS).index("by").getAll(IDBKeyRange.only([resource, field, value]))) as Promise<StoredRow[]>,
        req(tx.objectStore(STATE).get(SEQ)) as Promise<number | undefined>,
      ]);
    });
    const rows = found.map((r) => r.data);
    this.cache?.fill(resource, field, value, seq ?? 0, found.map((r) => ({ id: r.id, data: structuredClone(r.data) })));
    return rows;
  }

  /**
   * Marks `tx`'s rows as told: each row it writes is `noteRow`d, and its commit carries
   * them (the caches patch their answers). A transaction not marked may have written any
   * row: every cache drops what it holds.
   */
  noteRows(tx: IDBTransaction): void {
    this.noted.set(tx, { rows: [], was: [] });
  }

  /**
   * A row `tx` wrote (its record as put) or deleted (null), if `tx` tells its rows;
   * `was`: the keys it had before (none: `[]`), if known (the initial sync's Worker then
   * sends its tab no row that neither had nor has one of the tab's keys).
   */
  noteRow(tx: IDBTransaction, resource: string, id: string, record: StoredRow | null, was?: IndexKey[]): void {
    const noted = this.noted.get(tx);
    if (!noted) return;
    const rows = noted.rows;
    noted.was.push(was);
    if (record === null) rows.push({ resource, id, deleted: true });
    // A resource with no declared keys: no cache holds it here (the declaration is the
    // store's), nor, told so, anywhere; its data is not sent.
    else if (this.indexes[resource]) rows.push({ resource, id, data: record.data, by: record.by ?? [] });
    else rows.push({ resource, id });
  }

  /**
   * A read-write transaction takes the next number of the commits' counter; once it has
   * committed, it is announced: to this tab's cache (before the writer hears of the
   * commit), to the other tabs, to `onCommit`.
   */
  private stamp(tx: IDBTransaction): void {
    const state = tx.objectStore(STATE);
    const read = state.get(SEQ);
    let seq = 0;
    this.stamped.set(tx, new Promise((resolve) => {
      read.onsuccess = () => {
        seq = (typeof read.result === "number" ? read.result : 0) + 1;
        state.put(seq, SEQ);
        resolve(seq);
      };
    }));
    tx.addEventListener("complete", () => {
      const noted = this.noted.get(tx);
      const rows = noted?.rows ?? null;
      // The cache keeps its own copy (the app may change the objects it wrote).
      if (this.cache) this.cache.apply({ seq, rows: rows && rows.map((r) => r.data === undefined ? r : { ...r, data: structuredClone(r.data) }) });
      // To the other tabs as text (a copy too): a tab parses only the resources it keeps,
      // and the Worker's own tab, which hears this too, passes it over unread.
      if (this.channel) this.channel.postMessage({ type: "commit", commit: packCommit({ seq, rows }), ...(this.worker === undefined ? {} : { from: this.worker }) });
      this.onCommit?.({ seq, rows }, noted?.was ?? null);
    });
  }

  close(): void {
    this.channel?.close();
    this.channel = null;
    this.db.close();
  }

  /** A transaction over the store's object stores. */
  tx(mode: IDBTransactionMode, options?: IDBTransactionOptions): IDBTransaction {
    const tx = options ? this.db.transaction([ROWS, OUTBOX, BASES, STATE], mode, options) : this.db.transaction([ROWS, OUTBOX, BASES, STATE], mode);
    if (mode === "readwrite") this.stamp(tx);
    return tx;
  }

  /**
   * A row: from memory if a key `query` keeps holds it (the same state as that answer:
   * it does not wait for a write transaction in progress), else read from IndexedDB.
   */
  async get(resource: string, id: string): Promise<RowData | undefined> {
    const kept = this.cache?.row(resource, id);
    if (kept) return structuredClone(kept);
    const found = await this.reading(() => req(this.db.transaction(ROWS, "readonly").objectStore(ROWS).get([resource, id])));
    return found?.data;
  }

  /** Every live row of `resource`. */
  async all(resource: string): Promise<RowData[]> {
    const found = await this.reading(() => req(this.db.transaction(ROWS, "readonly").objectStore(ROWS).index("resource").getAll(resource)));
    return found.map((r: { data: RowData }) => r.data);
  }

  /** A read of rows from IndexedDB, counted (`reads`) and told (`onRead`). */
  private async reading<T>(read: () => Promise<T>): Promise<T> {
    this.reads.started++;
    this.reads.waiting++;
    this.onRead?.();
    try {
      return await read();
    } finally {
      this.reads.waiting--;
    }
  }

  /**
   * The app's writes, with their outbox operations, in one transaction. Several edits
   * are one group: sent as one /v1/batch, which the server applies all or none of.
   * Throws `WriteRefused` (nothing stored) for an edit naming a resource or a field the
   * server lacks, once this tab's engine has read the schema (`schema`).
   */
  async write(edits: Edit[]): Promise<string[]> {
    return this.writeEdits(edits, edits.length > 1 ? uuid() : null);
  }

  /**
   * Many edits in one transaction (all stored or none), each its own operation, as if
   * each were a `write` of its own: not a group, so they are uploaded as single writes
   * are (coalesced per row by the dirty mask, in bulk calls), and one the server refuses
   * is refused alone. One transaction's fixed cost for all of them (bench/web/README.md).
   */
  async writeMany(edits: Edit[]): Promise<string[]> {
    return this.writeEdits(edits, null);
  }

  private async writeEdits(edits: Edit[], group: string | null): Promise<string[]> {
    if (this.schema) checkEdits(this.schema, edits);
    const ids = edits.map((edit) => edit.id ?? uuid());
    if (edits.length === 0) return ids;
    await this.transaction(async (tx) => {
      const rows = tx.objectStore(ROWS), outbox = tx.objectStore(OUTBOX), bases = tx.objectStore(BASES);
      // Each row's stored state, read once for all its edits and all rows at once (an
      // await per read is a round trip to the browser's storage); a row created under an
      // id made here has none. The edits are then played in memory in order, as one
      // `write` each would have read what the one before wrote.
      const given = new Map<string, { resource: string; id: string }>();
      edits.forEach((edit, i) => { if (edit.id !== undefined) given.set(rowKeyOf(edit.resource, ids[i]), { resource: edit.resource, id: ids[i] }); });
      const states = new Map<string, WriteState>();
      await Promise.all([...given].map(async ([key, { resource, id }]) => {
        const [current, base, waiting] = await Promise.all([
          req(rows.get([resource, id])) as Promise<StoredRow | undefined>,
          req(bases.getKey([resource, id])),
          req(outbox.index("row").getAll([resource, id])) as Promise<StoredOperation[]>,
        ]);
        states.set(key, { resource, id, data: current?.data, based: base !== undefined, waiting: waiting.some((o) => o.state !== "rejected") });
      }));
      for (const [i, edit] of edits.entries()) {
        const id = ids[i], key = rowKeyOf(edit.resource, id);
        let s = states.get(key);
        if (!s) states.set(key, s = { resource: edit.resource, id, data: undefined, based: false, waiting: false });
        const fields = edit.fields ?? {};
        // The first edit of a row the server has keeps the version it was made on: the
        // base of the three-way merge and the revision the upload sends.
        if (s.data && typeof s.data["revision"] === "number" && !s.based && !s.waiting) {
          bases.put({ resource: edit.resource, id, revision: s.data["revision"], row: s.data });
          s.based = true;
        }
        s.data = edit.kind === "delete" ? undefined : { ...(s.data ?? {}), ...fields, id };
        s.waiting = true;
        const op: Omit<StoredOperation, "sequence"> = {
          opID: uuid(), resource: edit.resource, rowID: id, kind: edit.kind,
          fields: Object.keys(fields).filter((f) => f !== "id"), group, sent: false, state: "pending", attempts: 0,
        };
        outbox.add(op);
      }
      // Each row once, as its last edit left it.
      for (const s of states.values()) {
        if (s.data === undefined) {
          rows.delete([s.resource, s.id]);
          this.noteRow(tx, s.resource, s.id, null);
        } else {
          const record = this.record(s.resource, s.id, s.data);
          rows.put(record);
          this.noteRow(tx, s.resource, s.id, record);
        }
      }
    }, { commit: true, noteRows: true });
    // This tab's engine uploads it (continuous mode's wait ends); the other tabs hear
    // `written`, and the one whose engine syncs uploads it. A write through the store
    // alone, as docs/WEB.md's sample makes, waited in the outbox for the next round.
    for (const listener of this.writeListeners) listener();
    this.broadcast({ type: "written" });
    return ids;
  }

  async operations(): Promise<StoredOperation[]> {
    return req(this.tx("readonly").objectStore(OUTBOX).getAll());
  }

  async state<T>(key: string): Promise<T | undefined> {
    return req(this.tx("readonly").objectStore(STATE).get(key));
  }

  async setState(key: string, value: unknown): Promise<void> {
    const tx = this.tx("readwrite");
    this.noteRows(tx);  // (no row)
    tx.objectStore(STATE).put(value, key);
    await done(tx);
  }

  /**
   * Runs `body` in one read-write transaction and waits for it to commit. `commit`: a
   * body that issues no request once it has returned (nothing of it left to run but
   * requests already made) has its transaction committed at once, not when the browser
   * has answered every `put` (a round trip less while it holds the app's reads).
   * `durability`: the transaction's (the browser's default when not given). A body that
   * throws aborts the transaction: nothing it wrote is kept.
   */
  async transaction<T>(body: (tx: IDBTransaction) => Promise<T> | T, options: { commit?: boolean; durability?: IDBTransactionDurability; noteRows?: boolean } = {}): Promise<T> {
    const tx = this.tx("readwrite", options.durability ? { durability: options.durability } : undefined);
    if (options.noteRows) this.noteRows(tx);
    let result: T;
    try {
      result = await body(tx);
    } catch (e) {
      // All or nothing: what the body wrote before it threw (a value that cannot be
      // stored, say) must not commit without the rest.
      try { tx.abort(); } catch { /* it has ended already */ }
      throw e;
    }
    const finished = done(tx);
    if (options.commit) {
      // Its number taken first (a body that never awaited has not heard it yet).
      await this.stamped.get(tx);
      // Not active (the body's last await was not one of its requests): it commits by itself.
      try { tx.commit(); } catch { /* committing already */ }
    }
    await finished;
    return result;
  }
}

/** An edit of the app's: a row created, changed (the fields given) or deleted. */
export interface Edit {
  resource: string;
  /** The row's id; left out, a new UUID (the id returned). */
  id?: string;
  kind: OperationKind;
  fields?: RowData;
}

/** A row as `writeEdits` plays its edits in memory: its data (undefined: none), a base kept, edits waiting. */
interface WriteState {
  resource: string;
  id: string;
  data: RowData | undefined;
  based: boolean;
  waiting: boolean;
}

function recordOf(indexes: Indexes, resource: string, id: string, data: RowData): StoredRow {
  const by = indexKeys(indexes, resource, data);
  return by.length ? { resource, id, data, by } : { resource, id, data };
}

export const stores = { ROWS, OUTBOX, BASES, STATE };

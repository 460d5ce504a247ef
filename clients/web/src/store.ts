// The IndexedDB store: rows, the outbox, the bases of local edits and the sync state.
// Every local write puts the row and its outbox operation in ONE IndexedDB transaction,
// and every feed page puts its rows and its cursor in one: a closed tab leaves both or
// neither. The decisions (merge, feed entries, plans) come from the pure modules.

import { RowData } from "./json.js";
import { PendingOperation, OperationKind, OutboxState } from "./planner.js";
import { Indexes, IndexValue, indexKeys, normalIndexes, sameIndexes } from "./indexes.js";

export interface StoredOperation extends PendingOperation {
  state: OutboxState;
  attempts: number;
  lastError?: unknown;
}

const ROWS = "rows", OUTBOX = "outbox", BASES = "bases", STATE = "state";

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

  private constructor(readonly db: IDBDatabase, readonly name: string) {}

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
    const store = new FerryStore(await req(open), name);
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
    const found: StoredRow[] = await req(this.db.transaction(ROWS, "readonly").objectStore(ROWS).index("by").getAll(IDBKeyRange.only([resource, field, value])));
    return found.map((r) => r.data);
  }

  close(): void {
    this.db.close();
  }

  /** A transaction over the store's object stores. */
  tx(mode: IDBTransactionMode): IDBTransaction {
    return this.db.transaction([ROWS, OUTBOX, BASES, STATE], mode);
  }

  async get(resource: string, id: string): Promise<RowData | undefined> {
    const found = await req(this.db.transaction(ROWS, "readonly").objectStore(ROWS).get([resource, id]));
    return found?.data;
  }

  /** Every live row of `resource`. */
  async all(resource: string): Promise<RowData[]> {
    const found = await req(this.db.transaction(ROWS, "readonly").objectStore(ROWS).index("resource").getAll(resource));
    return found.map((r: { data: RowData }) => r.data);
  }

  /** The app's writes, with their outbox operations, in one transaction (`group` = one /v1/batch). */
  async write(edits: { resource: string; id?: string; kind: OperationKind; fields?: RowData }[]): Promise<string[]> {
    const tx = this.tx("readwrite");
    const rows = tx.objectStore(ROWS), outbox = tx.objectStore(OUTBOX);
    const group = edits.length > 1 ? uuid() : null;
    const ids: string[] = [];
    for (const edit of edits) {
      const id = edit.id ?? uuid();
      ids.push(id);
      const fields = edit.fields ?? {};
      // The row, its base and its waiting operations, read at once (each await is a
      // round trip to the browser's storage).
      const bases = tx.objectStore(BASES);
      const [current, base, waiting] = await Promise.all([
        req(rows.get([edit.resource, id])) as Promise<{ data: RowData } | undefined>,
        req(bases.get([edit.resource, id])),
        req(outbox.index("row").getAll([edit.resource, id])) as Promise<StoredOperation[]>,
      ]);
      // The first edit of a row the server has keeps the version it was made on: the
      // base of the three-way merge and the revision the upload sends.
      if (current && typeof current.data["revision"] === "number" && !base) {
        if (!waiting.some((o) => o.state !== "rejected")) bases.put({ resource: edit.resource, id, revision: current.data["revision"], row: current.data });
      }
      if (edit.kind === "delete") {
        rows.delete([edit.resource, id]);
      } else {
        const data: RowData = { ...(current?.data ?? {}), ...fields, id };
        rows.put(this.record(edit.resource, id, data));
      }
      const op: Omit<StoredOperation, "sequence"> = {
        opID: uuid(), resource: edit.resource, rowID: id, kind: edit.kind,
        fields: Object.keys(fields).filter((f) => f !== "id"), group, sent: false, state: "pending", attempts: 0,
      };
      outbox.add(op);
    }
    await done(tx);
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
    tx.objectStore(STATE).put(value, key);
    await done(tx);
  }

  /**
   * Runs `body` in one read-write transaction and waits for it to commit. `commit`: a
   * body that issues no request once it has returned (nothing of it left to run but
   * requests already made) has its transaction committed at once, not when the browser
   * has answered every `put` (a round trip less while it holds the app's reads).
   * `durability`: the transaction's (the browser's default when not given).
   */
  async transaction<T>(body: (tx: IDBTransaction) => Promise<T> | T, options: { commit?: boolean; durability?: IDBTransactionDurability } = {}): Promise<T> {
    const tx = options.durability ? this.db.transaction([ROWS, OUTBOX, BASES, STATE], "readwrite", { durability: options.durability }) : this.tx("readwrite");
    const result = await body(tx);
    const finished = done(tx);
    if (options.commit) {
      // Not active (the body's last await was not one of its requests): it commits by itself.
      try { tx.commit(); } catch { /* committing already */ }
    }
    await finished;
    return result;
  }
}

function recordOf(indexes: Indexes, resource: string, id: string, data: RowData): StoredRow {
  const by = indexKeys(indexes, resource, data);
  return by.length ? { resource, id, data, by } : { resource, id, data };
}

export const stores = { ROWS, OUTBOX, BASES, STATE };

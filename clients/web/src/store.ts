// The IndexedDB store: rows, the outbox, the bases of local edits and the sync state.
// Every local write puts the row and its outbox operation in ONE IndexedDB transaction,
// and every feed page puts its rows and its cursor in one: a closed tab leaves both or
// neither. The decisions (merge, feed entries, plans) come from the pure modules.

import { RowData } from "./json.js";
import { PendingOperation, OperationKind, OutboxState } from "./planner.js";

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

/** One tab's handle on the store; several tabs share the database. */
export class FerryStore {
  private constructor(readonly db: IDBDatabase, readonly name: string) {}

  static async open(name: string): Promise<FerryStore> {
    const open = indexedDB.open(`ferry:${name}`, 1);
    open.onupgradeneeded = () => {
      const db = open.result;
      const rows = db.createObjectStore(ROWS, { keyPath: ["resource", "id"] });
      rows.createIndex("resource", "resource");
      const outbox = db.createObjectStore(OUTBOX, { keyPath: "sequence", autoIncrement: true });
      outbox.createIndex("row", ["resource", "rowID"]);
      db.createObjectStore(BASES, { keyPath: ["resource", "id"] });
      db.createObjectStore(STATE);
    };
    return new FerryStore(await req(open), name);
  }

  close(): void {
    this.db.close();
  }

  /** A transaction over the store's object stores. */
  tx(mode: IDBTransactionMode): IDBTransaction {
    return this.db.transaction([ROWS, OUTBOX, BASES, STATE], mode);
  }

  async get(resource: string, id: string): Promise<RowData | undefined> {
    const found = await req(this.tx("readonly").objectStore(ROWS).get([resource, id]));
    return found?.data;
  }

  /** Every live row of `resource`. */
  async all(resource: string): Promise<RowData[]> {
    const found = await req(this.tx("readonly").objectStore(ROWS).index("resource").getAll(resource));
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
        rows.put({ resource: edit.resource, id, data });
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

  /** Runs `body` in one read-write transaction and waits for it to commit. */
  async transaction<T>(body: (tx: IDBTransaction) => Promise<T> | T): Promise<T> {
    const tx = this.tx("readwrite");
    const result = await body(tx);
    await done(tx);
    return result;
  }
}

export const stores = { ROWS, OUTBOX, BASES, STATE };

// The main thread's cache of `FerryStore.query` answers, kept in step with the store, so
// that a read does not queue in IndexedDB behind the initial sync's write transactions.
//
// Every read-write transaction of the store takes the next number of one counter kept in
// the store itself (`seq`, in the state store): IndexedDB runs read-write transactions
// over the same stores one after the other, so the numbers are the order of the commits.
// Once committed, a transaction is announced (`Commit`) to every tab's cache: by the tab
// that wrote it at once, through the tabs' BroadcastChannel to the others (and the
// initial sync's Worker through its tab). Announcements of different writers may arrive
// out of order, so an entry takes one only if it is the next number after the state it
// holds; any other is a gap, and the entry is dropped (read again next time). A fill
// reads the counter with the rows, in one transaction: the state it holds. A fill during
// which a newer commit was heard is answered but not kept (the brief's rule: it may hold
// a state older than one this tab already applied elsewhere).

import { RowData } from "./json.js";
import { IndexKey, IndexValue } from "./indexes.js";

/**
 * One row a committed transaction wrote: `deleted`, or its `data` and its keys (`by`) as
 * stored; neither: written, but not told how (its resource's keys were not declared where
 * it was written): the entries of its resource are dropped.
 */
export interface RowChange {
  resource: string;
  id: string;
  deleted?: boolean;
  data?: RowData;
  by?: IndexKey[];
}

/** A committed read-write transaction: its number, and the rows it wrote (null: not told, any row). */
export interface Commit {
  seq: number;
  rows: RowChange[] | null;
}

/** The most keys and rows kept (the least recently read leave first). */
export const cacheLimits = { keys: 256, rows: 50_000 };

interface Entry {
  resource: string;
  field: string;
  value: IndexValue;
  /** The commit whose state it holds. */
  at: number;
  rows: Map<string, RowData>;
  /** `rows` in id order (IndexedDB's), made when asked. */
  sorted: RowData[] | null;
}

export class QueryCache {
  /** In the order last read (a Map keeps insertion order): the first leaves first. */
  private entries = new Map<string, Entry>();
  private rowCount = 0;
  /** The newest commit heard. */
  private newest = 0;
  /** Answers given from memory, fills kept, entries dropped by a commit they could not follow (tests, benchmarks). */
  readonly counts = { hits: 0, fills: 0, drops: 0 };

  constructor(readonly maxKeys = cacheLimits.keys, readonly maxRows = cacheLimits.rows) {}

  /** Keys held, rows held (tests, docs). */
  get size(): { keys: number; rows: number } {
    return { keys: this.entries.size, rows: this.rowCount };
  }

  /** The answer kept for a key, in id order (shared: the caller copies it), or undefined. */
  get(resource: string, field: string, value: IndexValue): RowData[] | undefined {
    const key = keyOf(resource, field, value);
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.counts.hits++;
    this.entries.delete(key);
    this.entries.set(key, entry);
    if (!entry.sorted) {
      const ids = [...entry.rows.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
      entry.sorted = ids.map((id) => entry.rows.get(id)!);
    }
    return entry.sorted;
  }

  /**
   * A fill's answer: the rows IndexedDB held for the key at commit `seq`. Kept unless a
   * commit newer than `seq` was heard meanwhile, or a fill answered a newer state (then
   * the next read reads again: the app may have seen that newer state). Returns whether
   * it was kept.
   */
  fill(resource: string, field: string, value: IndexValue, seq: number, rows: { id: string; data: RowData }[]): boolean {
    if (this.newest > seq) return false;
    this.newest = seq;
    if (rows.length > this.maxRows) return false;
    const key = keyOf(resource, field, value);
    this.drop(key);
    this.entries.set(key, { resource, field, value, at: seq, rows: new Map(rows.map((r) => [r.id, r.data])), sorted: null });
    this.rowCount += rows.length;
    this.counts.fills++;
    this.trim();
    return true;
  }

  /** A committed transaction: each entry takes it if it is the next, or leaves. */
  apply(commit: Commit): void {
    if (commit.seq > this.newest) this.newest = commit.seq;
    if (this.entries.size === 0) return;
    const byResource = new Map<string, RowChange[]>();
    for (const change of commit.rows ?? []) {
      const list = byResource.get(change.resource);
      if (list) list.push(change);
      else byResource.set(change.resource, [change]);
    }
    for (const [key, entry] of [...this.entries]) {
      if (commit.seq <= entry.at) continue;  // already in its state
      if (commit.seq !== entry.at + 1 || commit.rows === null) { this.drop(key); this.counts.drops++; continue; }
      entry.at = commit.seq;
      const changes = byResource.get(entry.resource);
      if (!changes) continue;
      if (!this.patch(entry, changes)) { this.drop(key); this.counts.drops++; }
    }
    this.trim();
  }

  /** Every entry dropped (a change this cache cannot follow). */
  clear(): void {
    this.entries.clear();
    this.rowCount = 0;
  }

  /** The entries of `resources` dropped (all of them: undefined). */
  dropResources(resources?: string[]): void {
    if (!resources) return this.clear();
    const set = new Set(resources);
    for (const [key, entry] of [...this.entries]) if (set.has(entry.resource)) this.drop(key);
  }

  /** `changes` (of the entry's resource) into the entry; false if it cannot be followed. */
  private patch(entry: Entry, changes: RowChange[]): boolean {
    for (const change of changes) {
      if (!change.deleted && change.data === undefined) return false;
      if (entry.rows.delete(change.id)) this.rowCount--;
      const found = !change.deleted && (change.by ?? []).some((k) => k[1] === entry.field && k[2] === entry.value);
      if (found) {
        entry.rows.set(change.id, change.data!);
        this.rowCount++;
      }
      entry.sorted = null;
    }
    return entry.rows.size <= this.maxRows;
  }

  private drop(key: string): void {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.rowCount -= entry.rows.size;
    this.entries.delete(key);
  }

  private trim(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxKeys && this.rowCount <= this.maxRows) return;
      this.drop(key);
    }
  }
}

function keyOf(resource: string, field: string, value: IndexValue): string {
  return JSON.stringify([resource, field, value]);
}

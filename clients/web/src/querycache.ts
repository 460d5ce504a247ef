// The main thread's cache of `FerryStore.query` answers, kept in step with the store, so
// that a read does not queue in IndexedDB behind the initial sync's write transactions.
//
// Every read-write transaction of the store takes the next number of one counter kept in
// the store itself (`seq`, in the state store): IndexedDB runs read-write transactions
// over the same stores one after the other, so the numbers are the order of the commits.
// Once committed, a transaction is announced (`Commit`) to every tab's cache: by the tab
// that wrote it at once, through the tabs' BroadcastChannel to the others (the initial
// sync's Worker posts there itself, and sends its own tab only the rows of the keys that
// tab keeps: `commitFor`). Announcements of different writers may arrive
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
  /** (A commit cut to some keys, `commitFor`) written, but with none of them now: out of every entry. */
  left?: boolean;
}

/**
 * A committed read-write transaction: its number, and the rows it wrote (null: not told,
 * any row). `packed`: the rows as JSON text per resource, in place of `rows` (null then):
 * how a commit goes over the tabs' channel, so that a tab receives a string, parsed only
 * for the resources it keeps (an older FerryWeb, which reads `rows` alone, drops its keys).
 * `keys`: a commit cut to these keys (`commitFor`): it holds every row that has or had one
 * of them, and no other; an entry of another key cannot follow it.
 */
export interface Commit {
  seq: number;
  rows: RowChange[] | null;
  packed?: Record<string, string>;
  keys?: string[];
}

/** A commit as sent over the tabs' channel: its rows as JSON text per resource (`Commit.packed`). */
export function packCommit(commit: Commit): Commit {
  if (commit.rows === null) return { seq: commit.seq, rows: null };
  const byResource = new Map<string, RowChange[]>();
  for (const change of commit.rows) {
    const list = byResource.get(change.resource);
    if (list) list.push(change);
    else byResource.set(change.resource, [change]);
  }
  const packed: Record<string, string> = {};
  for (const [resource, changes] of byResource) packed[resource] = JSON.stringify(changes);
  return { seq: commit.seq, rows: null, packed };
}

/**
 * `commit` cut to what a cache holding `keys` (`QueryCache.keys()`) needs to follow it:
 * each row that has one of them now, with its data; each that had one (`was`, the keys
 * it had before the commit, per row; undefined: not known) and has none now, as `left`;
 * rows of a resource none of the keys is of, and rows that had and have none of them,
 * not at all. The initial sync's Worker sends its tab this, not its slice's 1,000 rows.
 */
export function commitFor(commit: Commit, was: (IndexKey[] | undefined)[] | null, keys: ReadonlySet<string>): Commit {
  if (commit.rows === null) return { seq: commit.seq, rows: null };
  const resources = new Set<string>();
  for (const key of keys) resources.add((JSON.parse(key) as IndexKey)[0]);
  const rows: RowChange[] = [];
  commit.rows.forEach((change, i) => {
    if (!resources.has(change.resource)) return;
    // Not told how (an undeclared resource): sent as it is, its entries are dropped.
    if (!change.deleted && change.data === undefined) { rows.push(change); return; }
    const before = was?.[i];
    const had = before === undefined || before.some((k) => keys.has(JSON.stringify(k)));
    if (change.deleted) { if (had) rows.push({ resource: change.resource, id: change.id, deleted: true }); return; }
    if ((change.by ?? []).some((k) => keys.has(JSON.stringify(k)))) rows.push(change);
    else if (had) rows.push({ resource: change.resource, id: change.id, left: true });
  });
  return { seq: commit.seq, rows, keys: [...keys] };
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
  /** Told the keys held when they have changed, once per task (the initial sync's Worker cuts its commits to them). */
  onKeys: ((keys: string[]) => void) | null = null;
  private keysTold = true;

  constructor(readonly maxKeys = cacheLimits.keys, readonly maxRows = cacheLimits.rows) {}

  /** Keys held, rows held (tests, docs). */
  get size(): { keys: number; rows: number } {
    return { keys: this.entries.size, rows: this.rowCount };
  }

  /** The keys held (as `commitFor` takes them). */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  /**
   * A row kept under some key, as of the newest commit heard (every entry holds that
   * state: one that could not take a commit left), or undefined: not kept, which does not
   * say whether the store has it.
   */
  row(resource: string, id: string): RowData | undefined {
    for (const entry of this.entries.values()) {
      if (entry.resource !== resource) continue;
      const found = entry.rows.get(id);
      if (found) return found;
    }
    return undefined;
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
    this.keysChanged();
    this.trim();
    return true;
  }

  /** A committed transaction: each entry takes it if it is the next, or leaves. */
  apply(commit: Commit): void {
    if (commit.seq > this.newest) this.newest = commit.seq;
    if (this.entries.size === 0) return;
    const told = commit.rows !== null || commit.packed !== undefined;
    const covered = commit.keys ? new Set(commit.keys) : null;
    // Per resource, the rows it wrote: a packed commit's parsed only for the resources of entries that take it.
    const byResource = new Map<string, RowChange[] | undefined>();
    for (const change of commit.rows ?? []) {
      const list = byResource.get(change.resource);
      if (list) list.push(change);
      else byResource.set(change.resource, [change]);
    }
    const changesOf = (resource: string): RowChange[] | undefined => {
      if (!commit.packed) return byResource.get(resource);
      if (!byResource.has(resource)) {
        const text = commit.packed[resource];
        byResource.set(resource, text === undefined ? undefined : JSON.parse(text) as RowChange[]);
      }
      return byResource.get(resource);
    };
    for (const [key, entry] of [...this.entries]) {
      if (commit.seq <= entry.at) continue;  // already in its state
      if (commit.seq !== entry.at + 1 || !told || (covered && !covered.has(key))) { this.drop(key); this.counts.drops++; continue; }
      entry.at = commit.seq;
      const changes = changesOf(entry.resource);
      if (!changes) continue;
      if (!this.patch(entry, changes)) { this.drop(key); this.counts.drops++; }
    }
    this.trim();
  }

  /** Every entry dropped (a change this cache cannot follow). */
  clear(): void {
    if (this.entries.size) this.keysChanged();
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
      if (!change.deleted && !change.left && change.data === undefined) return false;
      if (entry.rows.delete(change.id)) this.rowCount--;
      const found = !change.deleted && !change.left && (change.by ?? []).some((k) => k[1] === entry.field && k[2] === entry.value);
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
    this.keysChanged();
  }

  private keysChanged(): void {
    if (!this.onKeys || !this.keysTold) return;
    this.keysTold = false;
    queueMicrotask(() => {
      this.keysTold = true;
      this.onKeys?.(this.keys());
    });
  }

  private trim(): void {
    for (const key of this.entries.keys()) {
      if (this.entries.size <= this.maxKeys && this.rowCount <= this.maxRows) return;
      this.drop(key);
    }
  }
}

/** A key as the cache and `commitFor` name it: the JSON of a row's `[resource, field, value]`. */
export function keyOf(resource: string, field: string, value: IndexValue): string {
  return JSON.stringify([resource, field, value]);
}

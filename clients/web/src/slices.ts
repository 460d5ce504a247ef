// The size of an initial sync's slices (rows per IndexedDB write transaction). A read of
// the store waits for the write transaction in progress, so a slice should be short; but
// sized by the wall time from asking for the transaction to its commit, they shrank to
// the 20-row floor on a loaded machine: that time holds the wait before the transaction
// starts (behind the app's reads in progress), which a bigger slice does not add to, and
// one slow commit halved the next slice. So a slice is sized by what a row costs in a
// running transaction, over the last slices.

/** Smallest and largest slice: below 20 rows a transaction's own cost is all there is. */
export const sliceFloor = 20, sliceCeiling = 1000;

/**
 * A slice's size while the tab reads rows from IndexedDB (`get`, `all`, a key's first
 * `query`): such a read waits for the write transaction in progress (IndexedDB runs a
 * read after a read-write transaction over the same object store that was asked for
 * before it), and 50 rows commit in about 12 ms at load 8, where 1,000 take 160-350 ms.
 */
export const readerSlice = 50;

/** The slices a row's cost is taken over: the last 16 (a page of 1,000 rows at about 60 a slice). */
const kept = 16;

export class SliceSizer {
  /** The next slice's size. */
  rows: number;
  /** What a row cost in each of the last slices, ms. */
  private costs: number[] = [];

  /** `first` rows to start with; `budget`: the ms a slice's transaction should run. */
  constructor(first: number, private readonly budget: number) {
    this.rows = Math.max(1, Math.round(first));
  }

  /**
   * A slice of `rows` ran `ran` ms, from its transaction's start (the answer to its first
   * read) to its commit. A row costs that divided by the rows, the median over the last
   * slices (one slow commit barely moves it); the next slice is the budget's worth of
   * rows at that cost. At most twice or half the last, between the floor and the ceiling.
   * A transaction's cost of its own counts in each row's share: a slice is never sized
   * past the budget, only never below it for waiting that is not its own.
   */
  record(rows: number, ran: number): number {
    this.costs.push(ran / Math.max(rows, 1));
    if (this.costs.length > kept) this.costs.shift();
    const ideal = this.budget / Math.max(median(this.costs), 1e-6);
    const next = Math.min(this.rows * 2, Math.max(this.rows / 2, ideal));
    this.rows = Math.round(Math.min(sliceCeiling, Math.max(sliceFloor, next)));
    return this.rows;
  }
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

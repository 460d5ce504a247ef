// What a finished initial sync removes: the rows the store held that no Index page
// brought back (FerryKit's `ferry_unconfirmed`, docs/API.md "Delta sync"). After a 410
// `cursor_expired` the store is filled again from Index pages and a new cursor; a row the
// server deleted before that cursor is in no page and in no feed page after it, so only
// this sweep can tell the store it is gone. Decided from keys alone, tested under Node;
// the engine reads the facts and carries it out in the transaction that saves the cursor.

/** A row's key in these sets: `rowKeyOf(resource, id)` (src/planner.ts). */
export type RowKey = string;

export interface Sweep {
  /** Rows to remove: held before, brought by no page, of no subscription, no edit waiting (sorted). */
  remove: RowKey[];
  /**
   * The rows the default stream holds beside a subscription (`held:`), once it is known
   * what the default stream has now: those the pages brought. A row the default stream
   * no longer has (edits waiting or not, as FerryKit's) is then only its subscription's,
   * and leaves with it.
   */
  heldByDefault: RowKey[];
}

/** What `restartSweep` decided. */
export interface RestartDecision {
  /** Rows that leave the store, each with a `removed` event (sorted by resource, then id). */
  remove: RowKey[];
  /** Rows that stay the stream's (sorted): brought again, or edits waiting. */
  keep: RowKey[];
}

const byResourceThenID = (a: RowKey, b: RowKey): number => {
  const [ra, ia] = a.split("\u0000"), [rb, ib] = b.split("\u0000");
  return ra < rb ? -1 : ra > rb ? 1 : ia < ib ? -1 : ia > ib ? 1 : 0;
};

/**
 * What a stream's restart after a 410 removes when its new download is done, for the
 * default stream and a subscription's alike: FerryKit's `RestartSweep.decide`, held to
 * it by clients/conformance/restarts.json. `held`: the rows the stream held when it
 * started over. `brought`: the rows a page of the new download brought. `elsewhere`:
 * rows another source holds (another subscription; for a subscription, the default
 * stream too). `pending`: rows with edits waiting (not refused). `exists`: rows the
 * store has. In this order: a row the store no longer has only leaves the stream's
 * list; one brought again stays the stream's; one held elsewhere stays in the store
 * and leaves the stream's list; one with edits waiting stays the stream's; the rest
 * leaves the store.
 */
export function restartSweep(
  held: Iterable<RowKey>, brought: ReadonlySet<RowKey>, elsewhere: ReadonlySet<RowKey>,
  pending: (key: RowKey) => boolean, exists: (key: RowKey) => boolean,
): RestartDecision {
  const remove: RowKey[] = [], keep: RowKey[] = [];
  for (const key of new Set(held)) {
    if (!exists(key)) continue;
    if (brought.has(key)) keep.push(key);
    else if (elsewhere.has(key)) continue;
    else if (pending(key)) keep.push(key);
    else remove.push(key);
  }
  return { remove: remove.sort(byResourceThenID), keep: keep.sort(byResourceThenID) };
}

/**
 * `stored`: the store's rows of the resources the initial sync listed (a resource it did
 * not list cannot be confirmed, so none of its rows is taken for gone). `brought`: every
 * row an Index page of this run brought. `bySubscription`: the rows each subscription
 * brought (`held:<stream>`), which are their stream's to keep or remove, not the default
 * stream's (the Index leaves public rows out). `pending(key)`: edits of the row wait in
 * the outbox (not refused); those rows stay, and their upload meets what the server has.
 */
export function sweep(
  stored: Iterable<RowKey>, brought: ReadonlySet<RowKey>, bySubscription: Iterable<Iterable<RowKey>>,
  heldByDefault: Iterable<RowKey>, pending: (key: RowKey) => boolean,
): Sweep {
  const subscribed = new Set<RowKey>();
  for (const held of bySubscription) for (const key of held) subscribed.add(key);
  // The default stream's own rows: the stored ones, and those it holds beside a
  // subscription (every row it holds is stored; a sweep never sees a gone row).
  const held = new Set([...stored, ...heldByDefault]);
  const out = restartSweep(held, brought, subscribed, pending, () => true);
  const keep = new Set(out.keep);
  return { remove: out.remove, heldByDefault: [...heldByDefault].filter((key) => keep.has(key)) };
}

/** The rows `sweep` might remove, before the outbox is read for them: the candidates. */
export function unconfirmed(stored: Iterable<RowKey>, brought: ReadonlySet<RowKey>, bySubscription: Iterable<Iterable<RowKey>>): RowKey[] {
  return sweep(stored, brought, bySubscription, [], () => false).remove;
}

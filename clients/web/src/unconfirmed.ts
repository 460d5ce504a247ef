// What a finished initial sync removes: the rows the store held that no Index page
// brought back (FerryKit's `ferry_unconfirmed`, docs/API.md "Delta sync"). After a 410
// `cursor_expired` the store is filled again from Index pages and a new cursor; a row the
// server deleted before that cursor is in no page and in no feed page after it, so only
// this sweep can tell the store it is gone. Decided from keys alone, tested under Node;
// the engine reads the facts and carries it out in the transaction that saves the cursor.

/** A row's key in these sets: `rowKeyOf(resource, id)` (src/planner.ts). */
export type RowKey = string;

export interface Sweep {
  /** Rows to remove: held before, brought by no page, of no subscription, no edit waiting. */
  remove: RowKey[];
  /**
   * The rows the default stream holds beside a subscription (`held:`), once it is known
   * what the default stream has now: those the pages brought, and rows kept for their
   * edits. A row the default stream no longer has is then only its subscription's, and
   * leaves with it.
   */
  heldByDefault: RowKey[];
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
  const remove = [...stored].filter((key) => !brought.has(key) && !subscribed.has(key) && !pending(key));
  return { remove, heldByDefault: [...heldByDefault].filter((key) => brought.has(key) || pending(key)) };
}

/** The rows `sweep` might remove, before the outbox is read for them: the candidates. */
export function unconfirmed(stored: Iterable<RowKey>, brought: ReadonlySet<RowKey>, bySubscription: Iterable<Iterable<RowKey>>): RowKey[] {
  return sweep(stored, brought, bySubscription, [], () => false).remove;
}

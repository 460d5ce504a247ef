// Subscriptions as the store keeps them (state key `subscriptions`), and the order the
// engine downloads and waits on them in: FerryKit's priority queue (Trello's download
// queue). Higher priority first; within one priority, the most recently opened first;
// a subscription dropped before it synced leaves the queue. Pure, so the order is
// tested under Node.

/** A subscription's place in the download queue, as FerryKit's `SubscriptionPriority`. */
export type SubscriptionPriority = "low" | "normal" | "high";

/** The priorities, lowest first (FerryKit's raw values 0, 1, 2). */
export const subscriptionPriorities: readonly SubscriptionPriority[] = ["low", "normal", "high"];

/** Options of `engine.subscribe`. */
export interface SubscribeOptions {
  /** Its place in the download queue ("normal" by default). */
  priority?: SubscriptionPriority;
}

/** One subscription, as stored. */
export interface Subscription {
  /** `name:id`, as `GET /v1/changes?stream=`. */
  stream: string;
  priority: SubscriptionPriority;
  /** When it was last subscribed to, in the store's own count (higher: later). */
  opened: number;
  /** Whether its stream reached its end once (its initial download is done). */
  synced: boolean;
  /**
   * Why the server refused its stream (a 400: a stream name it does not declare, an id
   * of the wrong type), as FerryKit's `.refused`: it left the queue, and is not followed
   * until subscribed again.
   */
  refused?: string;
}

/** Throws a TypeError naming the value when `priority` is not one of the three. */
export function checkPriority(priority: unknown): SubscriptionPriority {
  if (priority === undefined) return "normal";
  if (typeof priority === "string" && (subscriptionPriorities as readonly string[]).includes(priority)) return priority as SubscriptionPriority;
  throw new TypeError(`subscription priority ${JSON.stringify(priority)}: expected "low", "normal" or "high"`);
}

/**
 * The stored list, in either form: records, or the bare stream names a store kept before
 * priorities (FerryWeb's first form, read as is: no IndexedDB version change, which an
 * older tab still open would block). A bare name is "normal", opened in list order (the
 * later in the list, the later opened), and not yet synced: its next round follows it
 * from its cursor to its end as the queue's, then it is synced.
 */
export function subscriptionsOf(stored: unknown): Subscription[] {
  if (!Array.isArray(stored)) return [];
  const out: Subscription[] = [];
  stored.forEach((entry: unknown, i) => {
    if (typeof entry === "string") {
      out.push({ stream: entry, priority: "normal", opened: i + 1, synced: false });
    } else if (entry && typeof entry === "object" && typeof (entry as Subscription).stream === "string") {
      const e = entry as Partial<Subscription> & { stream: string };
      const priority = (subscriptionPriorities as readonly unknown[]).includes(e.priority) ? e.priority as SubscriptionPriority : "normal";
      const s: Subscription = { stream: e.stream, priority, opened: typeof e.opened === "number" ? e.opened : i + 1, synced: e.synced === true };
      if (typeof e.refused === "string") s.refused = e.refused;
      out.push(s);
    }
  });
  return out;
}

/**
 * Subscribes (or subscribes again): at the head of its priority (opened after every
 * other), with the priority given. One subscribed again keeps whether it synced: it
 * resumes from its cursor; one refused is asked again.
 */
export function subscribed(list: Subscription[], stream: string, priority: SubscriptionPriority): Subscription[] {
  const opened = list.reduce((most, s) => Math.max(most, s.opened), 0) + 1;
  const before = list.find((s) => s.stream === stream);
  return [...list.filter((s) => s.stream !== stream), { stream, priority, opened, synced: before?.synced ?? false }];
}

/** Every subscription, higher priority first, within one the most recently opened first. */
export function byPriority(list: Subscription[]): Subscription[] {
  const rank = (p: SubscriptionPriority) => subscriptionPriorities.indexOf(p);
  return [...list].sort((a, b) => rank(b.priority) - rank(a.priority) || b.opened - a.opened);
}

/** The download queue, head first: the subscriptions not synced (nor refused) yet, by priority. */
export function downloadQueue(list: Subscription[]): Subscription[] {
  return byPriority(list).filter((s) => !s.synced && s.refused === undefined);
}

/** The list with `stream` marked refused, for `reason` (unchanged if it is not subscribed). */
export function markedRefused(list: Subscription[], stream: string, reason: string): Subscription[] {
  return list.map((s) => s.stream === stream ? { ...s, refused: reason } : s);
}

/** The list with `stream` marked synced (unchanged if it is not subscribed). */
export function markedSynced(list: Subscription[], stream: string): Subscription[] {
  return list.map((s) => s.stream === stream ? { ...s, synced: true } : s);
}

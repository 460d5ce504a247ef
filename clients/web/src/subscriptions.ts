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
  /**
   * Seconds its rows stay in the store after `unsubscribe`, as a warm cache (FerryKit's
   * `ttl`, one day by default, `defaultTTL`): subscribing again within it resumes from
   * the kept cursor. 0: they leave at `unsubscribe`.
   */
  ttl?: number;
}

/** FerryKit's default TTL, `.days(1)`, in seconds. */
export const defaultTTL = 86_400;

/**
 * A subscription's state, as FerryKit's `SubscriptionState`: "queued" (waiting its turn,
 * or for the network), "syncing" (its first download running now), "synced" (reached its
 * stream's end once; later changes keep coming), "refused" (a 400, with the server's
 * reason), "unsubscribed" (its rows kept as a warm cache until `evictsAt`, ms since the
 * epoch), "none" (evicted, or never made).
 */
export type SubscriptionState =
  | { state: "queued" }
  | { state: "syncing" }
  | { state: "synced" }
  | { state: "refused"; reason: string }
  | { state: "unsubscribed"; evictsAt: number }
  | { state: "none" };

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
  /** Seconds its rows stay after `unsubscribe` (`SubscribeOptions.ttl`). */
  ttl: number;
  /**
   * When it was unsubscribed (ms since the epoch, the engine's clock): it left the queue
   * and is followed no more, but its rows and cursor stay until this plus `ttl`.
   */
  unsubscribedAt?: number;
}

/** Throws a TypeError naming the value when `ttl` is not a number of seconds from 0. */
export function checkTTL(ttl: unknown): number {
  if (ttl === undefined) return defaultTTL;
  if (typeof ttl === "number" && Number.isFinite(ttl) && ttl >= 0) return ttl;
  throw new TypeError(`subscription ttl ${JSON.stringify(ttl)}: expected a number of seconds from 0`);
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
      out.push({ stream: entry, priority: "normal", opened: i + 1, synced: false, ttl: defaultTTL });
    } else if (entry && typeof entry === "object" && typeof (entry as Subscription).stream === "string") {
      const e = entry as Partial<Subscription> & { stream: string };
      const priority = (subscriptionPriorities as readonly unknown[]).includes(e.priority) ? e.priority as SubscriptionPriority : "normal";
      const ttl = typeof e.ttl === "number" && e.ttl >= 0 ? e.ttl : defaultTTL;
      const s: Subscription = { stream: e.stream, priority, opened: typeof e.opened === "number" ? e.opened : i + 1, synced: e.synced === true, ttl };
      if (typeof e.refused === "string") s.refused = e.refused;
      if (typeof e.unsubscribedAt === "number") s.unsubscribedAt = e.unsubscribedAt;
      out.push(s);
    }
  });
  return out;
}

/**
 * Subscribes (or subscribes again): at the head of its priority (opened after every
 * other), with the priority and TTL given. One subscribed again keeps whether it synced:
 * it resumes from its cursor; one refused is asked again. One unsubscribed within its
 * TTL (its rows and cursor kept) is active again and queued, as FerryKit's: its next
 * round only catches up from the kept cursor, then it is synced again.
 */
export function subscribed(list: Subscription[], stream: string, priority: SubscriptionPriority, ttl = defaultTTL): Subscription[] {
  const opened = list.reduce((most, s) => Math.max(most, s.opened), 0) + 1;
  const before = list.find((s) => s.stream === stream);
  const synced = (before?.synced ?? false) && before?.unsubscribedAt === undefined;
  return [...list.filter((s) => s.stream !== stream), { stream, priority, opened, synced, ttl }];
}

/** The subscriptions not unsubscribed (those in their TTL are kept, but not followed). */
export function active(list: Subscription[]): Subscription[] {
  return list.filter((s) => s.unsubscribedAt === undefined);
}

/** The list with `stream` unsubscribed at `now` (ms): out of the queue, its rows kept for its TTL. */
export function markedUnsubscribed(list: Subscription[], stream: string, now: number): Subscription[] {
  return list.map((s) => s.stream === stream && s.unsubscribedAt === undefined ? { ...s, unsubscribedAt: now } : s);
}

/** Every subscription, higher priority first, within one the most recently opened first. */
export function byPriority(list: Subscription[]): Subscription[] {
  const rank = (p: SubscriptionPriority) => subscriptionPriorities.indexOf(p);
  return [...list].sort((a, b) => rank(b.priority) - rank(a.priority) || b.opened - a.opened);
}

/** The download queue, head first: the active subscriptions not synced (nor refused) yet, by priority. */
export function downloadQueue(list: Subscription[]): Subscription[] {
  return byPriority(active(list)).filter((s) => !s.synced && s.refused === undefined);
}

/**
 * The synced subscriptions' order, followed after the default stream (and waited on):
 * active, synced, not refused, by priority, the latest opened first.
 */
export function followedAfterDefault(list: Subscription[]): Subscription[] {
  return byPriority(active(list)).filter((s) => s.synced && s.refused === undefined);
}

/**
 * The streams continuous mode waits on beside the default stream, in order
 * (`SubscriptionRules.waited`): `followedAfterDefault`'s (a wait naming a refused one is
 * 400); none while the download queue is not empty: the queue downloads first, and the
 * waits come after it. `waitPlan` leaves out those without a cursor.
 */
export function waitedStreams(list: Subscription[]): string[] {
  if (downloadQueue(list).length > 0) return [];
  return followedAfterDefault(list).map((s) => s.stream);
}

/** What a stream's download does after a page (FerryKit's `SubscriptionRules.afterPage`). */
export type PageOutcome = "done" | "dropped" | "overtaken" | "next";

/**
 * After a page of `stream` with `more` to come or not: its end is "done" whatever else
 * happened; one unsubscribed (or evicted) meanwhile is "dropped", nothing more of it is
 * asked; the queue's download (`preemptible`) is "overtaken" when another subscription
 * heads the queue now (it waits its turn again, from its cursor); else the next page.
 */
export function afterPage(list: Subscription[], stream: string, more: boolean, preemptible: boolean): PageOutcome {
  if (!more) return "done";
  if (!active(list).some((s) => s.stream === stream)) return "dropped";
  const head = downloadQueue(list)[0];
  if (preemptible && head !== undefined && head.stream !== stream) return "overtaken";
  return "next";
}

/** The list with `stream` marked refused, for `reason` (unchanged if it is not subscribed). */
export function markedRefused(list: Subscription[], stream: string, reason: string): Subscription[] {
  return list.map((s) => s.stream === stream && s.unsubscribedAt === undefined ? { ...s, refused: reason } : s);
}

/** The list with `stream` marked synced (unchanged if it is not subscribed, or unsubscribed). */
export function markedSynced(list: Subscription[], stream: string): Subscription[] {
  return list.map((s) => s.stream === stream && s.unsubscribedAt === undefined ? { ...s, synced: true } : s);
}

/**
 * The state FerryKit's `SubscriptionState` reports for `s` (undefined: none), `syncing`
 * when its first download is running now.
 */
export function stateOf(s: Subscription | undefined, syncing: boolean): SubscriptionState {
  if (!s) return { state: "none" };
  if (s.unsubscribedAt !== undefined) return { state: "unsubscribed", evictsAt: s.unsubscribedAt + s.ttl * 1000 };
  if (s.refused !== undefined) return { state: "refused", reason: s.refused };
  if (s.synced) return { state: "synced" };
  return syncing ? { state: "syncing" } : { state: "queued" };
}

/** The unsubscribed subscriptions whose TTL has passed at `now` (ms), the earliest opened first (the order they leave in). */
export function dueForEviction(list: Subscription[], now: number): Subscription[] {
  return list.filter((s) => s.unsubscribedAt !== undefined && s.unsubscribedAt + s.ttl * 1000 <= now).sort((a, b) => a.opened - b.opened);
}

/**
 * When the next eviction is due after `now` (ms; FerryKit's `SubscriptionRules.nextEviction`):
 * the earliest end of a TTL still running (`unsubscribedAt + ttl` later than `now`); null
 * when none runs. Continuous mode evicts then, so a device that only listens evicts on
 * time. One already due is not counted: the eviction at `now` took it, and one it kept
 * for edits waiting leaves with the eviction after their upload (a round).
 */
export function nextEviction(list: Subscription[], now: number): number | null {
  let next: number | null = null;
  for (const s of list) {
    if (s.unsubscribedAt === undefined) continue;
    const at = s.unsubscribedAt + s.ttl * 1000;
    if (at > now && (next === null || at < next)) next = at;
  }
  return next;
}

/** What an eviction decided: the rows to remove, and per stream what left and what stays. */
export interface Eviction {
  /** Row keys (`rowKeyOf`) to remove from the store. */
  remove: string[];
  /** One per due stream (FerryKit's `.evicted`, sent when `removed` > 0 or the subscription ended). */
  streams: { stream: string; removed: number; keptForEdits: number; ended: boolean }[];
  /** The subscriptions after it (those that ended left). */
  list: Subscription[];
  /** Each remaining subscription's rows (`held:<stream>`), changed where a due stream let rows go. */
  held: Map<string, string[]>;
}

/**
 * FerryKit's `evictExpired` (`SubscriptionRules.evict`): the unsubscribed streams whose
 * TTL has passed at `now` (ms) leave, the earliest opened first. Each row one brought (`held`) that no other subscription
 * (active, or unsubscribed in its TTL, or due and not yet evicted) and not the default
 * stream (`heldByDefault`) holds is removed, unless it has edits waiting (`pending`):
 * those stay, still the stream's, and leave with a later eviction once their edits are
 * uploaded or refused; while one stays, the subscription stays (unsubscribed). A row
 * another source holds only leaves the stream's list. `exists`: the store holds the row
 * (a row deleted meanwhile is not counted as removed).
 */
export function eviction(list: Subscription[], held: Map<string, string[]>, heldByDefault: Set<string>,
                         pending: (key: string) => boolean, exists: (key: string) => boolean, now: number): Eviction {
  const lists = new Map([...held].map(([s, keys]) => [s, new Set(keys)]));
  const remove: string[] = [];
  const streams: Eviction["streams"] = [];
  let rest = list;
  for (const due of dueForEviction(list, now)) {
    const others = (key: string) => heldByDefault.has(key) || [...lists].some(([s, keys]) => s !== due.stream && keys.has(key));
    let removed = 0;
    const kept: string[] = [];
    for (const key of lists.get(due.stream) ?? []) {
      if (others(key)) continue;
      if (exists(key) && pending(key)) { kept.push(key); continue; }
      if (exists(key)) { remove.push(key); removed++; }
    }
    const ended = kept.length === 0;
    if (ended) {
      lists.delete(due.stream);
      rest = rest.filter((s) => s.stream !== due.stream);
    } else {
      lists.set(due.stream, new Set(kept));
    }
    if (removed > 0 || ended) streams.push({ stream: due.stream, removed, keptForEdits: kept.length, ended });
  }
  return { remove, streams, list: rest, held: new Map([...lists].map(([s, keys]) => [s, [...keys]])) };
}

/** What the default stream's revoked entries spare (FerryKit's `SubscriptionRules.Spared`). */
export interface Spared {
  /** The revoked rows that stay (row keys, sorted): no longer the default stream's, only their subscriptions'. */
  rows: string[];
  /** The subscriptions (sorted) that download their stream again from its start. */
  restart: string[];
}

/**
 * FerryKit's `SubscriptionRules.spare` (issue 46, the simulation's seed 1791): a revoked
 * entry of the default stream says only that the owner and membership rules no longer
 * reach a row; a subscription may still (a collaborator removed from a public set they
 * subscribed to), and its stream may never say so again: one downloaded from its start
 * after the revocation holds a cursor past it. So a row of `revoked` (row keys) that an
 * active subscription holds (`held`, its rows by stream; one unsubscribed, in its TTL,
 * does not count) stays, and each such subscription downloads its stream again from its
 * start: what it still reads is confirmed, what it no longer reads leaves at that
 * download's end (`restartSweep`). The rest is removed as the entry says.
 */
export function spare(revoked: Iterable<string>, list: Subscription[], held: Map<string, Iterable<string>>): Spared {
  const wanted = new Set(revoked);
  const live = new Set(active(list).map((s) => s.stream));
  const rows = new Set<string>(), restart: string[] = [];
  if (wanted.size === 0) return { rows: [], restart };
  for (const [stream, keys] of held) {
    if (!live.has(stream)) continue;
    let holds = false;
    for (const key of keys) if (wanted.has(key)) { rows.add(key); holds = true; }
    if (holds) restart.push(stream);
  }
  return { rows: [...rows].sort(), restart: restart.sort() };
}

/**
 * The list with `streams` queued to download again from their start (not synced, and
 * asked again if refused: FerryKit's status `queued`), as `spare` decided.
 */
export function markedRestarted(list: Subscription[], streams: string[]): Subscription[] {
  return list.map((s) => {
    if (!streams.includes(s.stream) || s.unsubscribedAt !== undefined) return s;
    const { refused: _refused, ...rest } = s;
    return { ...rest, synced: false };
  });
}

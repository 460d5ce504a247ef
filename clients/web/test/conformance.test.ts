// FerryWeb runs the protocol conformance suite FerryKit generated: the retry table,
// merge decisions, how each feed entry is applied, the outbox's plans and keys, the
// subscription rules (queue, pages, waits, evictions), and what a restart after a 410
// sweeps.
import { test } from "node:test";
import assert from "node:assert/strict";
import { RetryPolicy, retryAfterSeconds, Outcome, Step } from "../src/retry.js";
import { threeWayMerge, decide, needs, Resolver, Conflict, Decision, LocalFacts } from "../src/merge.js";
import { plan, bundle, writeGroups, digest, transition, PendingOperation, SchemaResource, OutboxState, OutboxEvent, Transition, rowKeyOf } from "../src/planner.js";
import { JSONValue, RowData } from "../src/json.js";
import { Subscription, SubscriptionPriority, PageOutcome, downloadQueue, followedAfterDefault, afterPage, waitedStreams, dueForEviction, nextEviction, eviction, defaultTTL, checkTTL, spare, markedRestarted } from "../src/subscriptions.js";
import { waitPlan, defaultWaitCap } from "../src/live.js";
import { restartSweep } from "../src/unconfirmed.js";
import { load } from "./conformance.js";

/** The resolvers the suite names (see merge.json's about). */
const resolvers: Record<string, Resolver> = {
  remote: (c: Conflict) => c.remote,
  base: (c: Conflict) => c.base,
  drop: () => undefined,
  joined: (c: Conflict) => [c.local, c.remote].filter((v): v is string => typeof v === "string").join("+"),
};

const retry = load<{
  steps: { name: string; outcome: Outcome; attempt: number; previousWasUnauthorized: boolean; random: number; expect: Step }[];
  retryAfter: { header: string | null; now: number; expect: number | null }[];
}>("retry.json");

for (const c of retry.steps) {
  test(`retry: ${c.name}`, () => {
    const step = new RetryPolicy().step(c.outcome, c.attempt, c.previousWasUnauthorized, () => c.random);
    assert.deepEqual(step, c.expect);
  });
}

test("retry: Retry-After headers", () => {
  for (const c of retry.retryAfter) {
    assert.equal(retryAfterSeconds(c.header, c.now * 1000), c.expect, `Retry-After: ${JSON.stringify(c.header)}`);
  }
});

const merge = load<{
  cases: { name: string; base: RowData | null; local: RowData; remote: RowData; dirty: string[]; resolver?: string;
           expect: { row: RowData; conflicts: Conflict[] } }[];
}>("merge.json");

for (const c of merge.cases) {
  test(`merge: ${c.name}`, () => {
    const got = threeWayMerge(c.base, c.local, c.remote, c.dirty, c.resolver ? resolvers[c.resolver] : undefined);
    assert.deepEqual(got, c.expect);
  });
}

const feed = load<{
  cases: { name: string; remote: RowData; local: { pending: boolean; base: RowData | null; row: RowData | null; dirty: string[] };
           needs: string[]; resolver?: string; expect: Decision }[];
}>("feed.json");

for (const c of feed.cases) {
  test(`feed entry: ${c.name}`, () => {
    assert.deepEqual(needs(c.remote, c.local.pending), c.needs);
    const local: LocalFacts = { pending: c.local.pending, base: c.local.base, row: c.local.row, dirty: c.local.dirty };
    assert.deepEqual(decide(c.remote, local, c.resolver ? resolvers[c.resolver] : undefined), c.expect);
  });
}

const outbox = load<{
  schema: SchemaResource[];
  plans: { name: string; operations: PendingOperation[]; rows: { resource: string; id: string; row: RowData }[];
           bases: { resource: string; id: string; revision: number }[]; expect: unknown[]; batches: (number | null)[];
           bundles: { requests: number[]; batch: boolean; bulk: boolean; idempotencyKey: string }[] }[];
  transitions: { state: OutboxState; event: OutboxEvent; expect: Transition }[];
  digests: { text: string; digest: string }[];
}>("outbox.json");

for (const c of outbox.plans) {
  test(`outbox plan: ${c.name}`, () => {
    const rows = new Map(c.rows.map((r) => [rowKeyOf(r.resource, r.id), r.row]));
    const bases = new Map(c.bases.map((b) => [rowKeyOf(b.resource, b.id), b.revision]));
    const planned = plan(c.operations, outbox.schema, rows, bases);
    assert.deepEqual(planned, c.expect);
    const batches = writeGroups(planned);
    assert.deepEqual(planned.map((_, i) => batches.get(i) ?? null), c.batches, "write groups");
    const calls = bundle(planned, outbox.schema, 2).map((b) => ({
      requests: b.requests.map((r) => planned.indexOf(r)), batch: b.batch, bulk: b.bulk, idempotencyKey: b.idempotencyKey,
    }));
    assert.deepEqual(calls, c.bundles, "the calls");
  });
}

test("outbox: every state and event", () => {
  assert.equal(outbox.transitions.length, 3 * 8);
  for (const t of outbox.transitions) assert.deepEqual(transition(t.state, t.event), t.expect, `${t.state} ${t.event}`);
});

test("outbox: digests of op ids", () => {
  for (const d of outbox.digests) assert.equal(digest(d.text), d.digest, JSON.stringify(d.text));
});

// Subscriptions: the queue, a download after each page, the waits, evictions.
interface SubscriptionCase {
  stream: string; priority: SubscriptionPriority; opened: number; synced: boolean; refused: boolean;
  cursor: string | null; ttl: number; unsubscribedAt: number | null;
}

/** A case's subscription as FerryWeb stores it (times in ms). */
function stored(s: SubscriptionCase): Subscription {
  const out: Subscription = { stream: s.stream, priority: s.priority, opened: s.opened, synced: s.synced, ttl: s.ttl };
  if (s.refused) out.refused = "refused";
  if (s.unsubscribedAt !== null) out.unsubscribedAt = s.unsubscribedAt * 1000;
  return out;
}

const subscriptions = load<{
  defaults: { ttl: number }[];
  queues: { name: string; subscriptions: SubscriptionCase[]; expect: { queue: string[]; synced: string[] } }[];
  pages: { name: string; subscriptions: SubscriptionCase[]; stream: string; more: boolean; preemptible: boolean; expect: PageOutcome }[];
  waits: { name: string; subscriptions: SubscriptionCase[]; defaultCursor: string; cap: number | null; expect: { waits: string[][]; unwaited: string[] } }[];
  evictions: { name: string; subscriptions: SubscriptionCase[]; now: number; held: Record<string, string[]>; heldByDefault: string[];
               pending: string[]; exists: string[];
               expect: { queue: string[]; due: string[]; removed: string[];
                         evicted: { stream: string; removed: number; keptForEdits: number; ended: boolean }[] } }[];
  nextEvictions: { name: string; subscriptions: SubscriptionCase[]; now: number; expect: number | null }[];
  revocations: { name: string; subscriptions: SubscriptionCase[]; held: Record<string, string[]>; revoked: string[];
                 expect: { spared: string[]; restart: string[]; queue: string[] } }[];
}>("subscriptions.json");

test("subscriptions: the default TTL", () => {
  assert.equal(defaultTTL, subscriptions.defaults[0].ttl);
  assert.equal(checkTTL(undefined), subscriptions.defaults[0].ttl);
});

for (const c of subscriptions.queues) {
  test(`subscription queue: ${c.name}`, () => {
    const list = c.subscriptions.map(stored);
    assert.deepEqual(downloadQueue(list).map((s) => s.stream), c.expect.queue, "the download queue");
    assert.deepEqual(followedAfterDefault(list).map((s) => s.stream), c.expect.synced, "after the default stream");
  });
}

for (const c of subscriptions.pages) {
  test(`subscription page: ${c.name}`, () => {
    assert.equal(afterPage(c.subscriptions.map(stored), c.stream, c.more, c.preemptible), c.expect);
  });
}

for (const c of subscriptions.waits) {
  test(`subscription waits: ${c.name}`, () => {
    const list = c.subscriptions.map(stored);
    const cursors = new Map(c.subscriptions.map((s) => [s.stream, s.cursor]));
    const streams = waitedStreams(list);
    // No stream beside the default one: its own long poll or event stream, no wait (engine.ts, start()).
    const plan = streams.length ? waitPlan(c.defaultCursor, streams.map((s): [string, string | null | undefined] => [s, cursors.get(s)]), c.cap ?? defaultWaitCap) : { bodies: [], unwaited: [] };
    assert.deepEqual(plan.bodies.map((b) => Object.keys(b.since)), c.expect.waits);
    assert.deepEqual(plan.unwaited, c.expect.unwaited);
  });
}

for (const c of subscriptions.evictions) {
  test(`subscription eviction: ${c.name}`, () => {
    const list = c.subscriptions.map(stored);
    const now = c.now * 1000;
    assert.deepEqual(downloadQueue(list).map((s) => s.stream), c.expect.queue, "the download queue");
    assert.deepEqual(dueForEviction(list, now).map((s) => s.stream), c.expect.due, "due");
    const pending = new Set(c.pending), exists = new Set(c.exists);
    const out = eviction(list, new Map(Object.entries(c.held)), new Set(c.heldByDefault), (k) => pending.has(k), (k) => exists.has(k), now);
    assert.deepEqual([...out.remove].sort(), [...c.expect.removed].sort(), "removed");
    assert.deepEqual(out.streams, c.expect.evicted, "evicted");
  });
}

for (const c of subscriptions.nextEvictions) {
  test(`subscription next eviction: ${c.name}`, () => {
    const next = nextEviction(c.subscriptions.map(stored), c.now * 1000);
    assert.equal(next, c.expect === null ? null : c.expect * 1000);
  });
}

// Kept to type-check the JSON shapes against the library's.
export type _Shapes = [JSONValue];

const restarts = load<{
  cases: { name: string; stream: string; held: string[]; brought: string[]; elsewhere: string[]; pending: string[]; exists: string[];
           expect: { remove: string[]; keep: string[] } }[];
}>("restarts.json");

/** `resource/id`, as the files name rows, to FerryWeb's row key and back. */
const keyOf = (row: string) => rowKeyOf(row.slice(0, row.indexOf("/")), row.slice(row.indexOf("/") + 1));
const rowOf = (key: string) => key.replace("\u0000", "/");

for (const c of restarts.cases) {
  test(`restart sweep: ${c.name}`, () => {
    const set = (rows: string[]) => new Set(rows.map(keyOf));
    const pending = set(c.pending), exists = set(c.exists);
    const out = restartSweep(c.held.map(keyOf), set(c.brought), set(c.elsewhere), (k) => pending.has(k), (k) => exists.has(k));
    assert.deepEqual({ remove: out.remove.map(rowOf), keep: out.keep.map(rowOf) }, c.expect);
  });
}

// What a default-stream page's revoked entries spare: the rows an active subscription
// holds stay, and each such subscription downloads its stream again (engine.ts, applyPage).
for (const c of subscriptions.revocations) {
  test(`subscription revocation: ${c.name}`, () => {
    const list = c.subscriptions.map(stored);
    const held = new Map(Object.entries(c.held).map(([s, rows]): [string, string[]] => [s, rows.map(keyOf)]));
    const out = spare(c.revoked.map(keyOf), list, held);
    assert.deepEqual(out.rows.map(rowOf), c.expect.spared, "spared");
    assert.deepEqual(out.restart, c.expect.restart, "restarted");
    assert.deepEqual(downloadQueue(markedRestarted(list, out.restart)).map((s) => s.stream), c.expect.queue, "the download queue then");
  });
}

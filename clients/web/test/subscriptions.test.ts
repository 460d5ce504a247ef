// Subscription priorities (FerryKit's queue): the order of the initial downloads and of
// the waits, and the two forms a store keeps its subscriptions in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { subscribed, byPriority, downloadQueue, markedSynced, markedRefused, markedUnsubscribed, markedRestarted, subscriptionsOf, checkPriority, checkTTL, stateOf, eviction, defaultTTL, Subscription, SubscriptionPriority } from "../src/subscriptions.js";
import { waitPlan } from "../src/live.js";

function subscribe(order: [string, SubscriptionPriority][], start: Subscription[] = []): Subscription[] {
  return order.reduce((list, [stream, priority]) => subscribed(list, stream, priority), start);
}

test("the queue: higher priority first, within one the most recently opened first", () => {
  const list = subscribe([["list:a", "low"], ["list:b", "normal"], ["list:c", "high"], ["list:d", "normal"], ["list:e", "low"], ["list:f", "high"]]);
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:f", "list:c", "list:d", "list:b", "list:e", "list:a"]);
});

test("a synced subscription is not in the queue; a new one overtakes the queue's head of its priority", () => {
  let list = subscribe([["list:a", "normal"], ["list:b", "normal"]]);
  assert.equal(downloadQueue(list)[0].stream, "list:b");
  list = markedSynced(list, "list:b");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:a"]);
  list = subscribed(list, "list:c", "normal");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:c", "list:a"], "the stream just opened goes first");
  list = subscribed(list, "list:d", "low");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:c", "list:a", "list:d"], "but not before a higher priority");
});

test("subscribing again moves it to the head of its new priority and keeps whether it synced", () => {
  let list = markedSynced(subscribe([["list:a", "low"], ["list:b", "high"], ["list:c", "normal"]]), "list:a");
  list = subscribed(list, "list:a", "high");
  assert.equal(list.length, 3, "once");
  assert.deepEqual(byPriority(list).map((s) => [s.stream, s.priority, s.synced]), [
    ["list:a", "high", true], ["list:b", "high", false], ["list:c", "normal", false],
  ]);
});

test("a refused subscription leaves the queue until subscribed again", () => {
  let list = markedRefused(subscribe([["nosuch:1", "high"], ["list:b", "normal"]]), "nosuch:1", "no stream nosuch");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:b"]);
  assert.equal(subscriptionsOf(JSON.parse(JSON.stringify(list)))[0].refused, "no stream nosuch", "kept in the store");
  list = subscribed(list, "nosuch:1", "high");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["nosuch:1", "list:b"]);
});

test("a subscription dropped before it synced leaves the queue", () => {
  const list = subscribe([["list:a", "high"], ["list:b", "normal"]]).filter((s) => s.stream !== "list:a");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:b"]);
});

test("the waits: the default stream first, then the subscriptions by priority, the latest opened first", () => {
  const list = subscribe([["list:a", "low"], ["list:b", "normal"], ["list:c", "high"], ["list:d", "normal"]]);
  const plan = waitPlan("c0", byPriority(list).map((s) => [s.stream, `c-${s.stream}`]), 2);
  assert.deepEqual(plan.bodies.map((b) => Object.keys(b.since)), [["default", "list:c"], ["list:d", "list:b"], ["list:a"]]);
});

test("a store's subscriptions from before priorities (bare stream names) read as normal, in the order subscribed", () => {
  const old = subscriptionsOf(["list:a", "list:b"]);
  assert.deepEqual(old.map((s) => [s.stream, s.priority, s.synced]), [["list:a", "normal", false], ["list:b", "normal", false]]);
  const list = subscribed(old, "list:c", "low");
  assert.deepEqual(byPriority(list).map((s) => s.stream), ["list:b", "list:a", "list:c"]);
  assert.deepEqual(subscriptionsOf(JSON.parse(JSON.stringify(list))), list, "records read back as written");
  assert.deepEqual(subscriptionsOf(undefined), []);
  assert.deepEqual(subscriptionsOf([{ stream: "list:x", priority: "urgent", opened: 3, synced: true }, 7, null]), [
    { stream: "list:x", priority: "normal", opened: 3, synced: true, ttl: 86_400 },
  ], "an unknown priority reads as normal; entries of another shape are left out");
});

test("a priority other than the three is refused, naming it", () => {
  assert.equal(checkPriority(undefined), "normal");
  for (const p of ["low", "normal", "high"]) assert.equal(checkPriority(p), p);
  for (const p of ["urgent", 2, null, "HIGH"]) {
    assert.throws(() => checkPriority(p), (e: Error) => e instanceof TypeError && e.message.includes(JSON.stringify(p)), String(p));
  }
});

// TTLs, states and evictions (FerryKit's `evictExpired`, `subscriptionState`).

test("a TTL is seconds from 0, a day by default; another value is refused, naming it", () => {
  assert.equal(checkTTL(undefined), defaultTTL);
  assert.equal(defaultTTL, 86_400);
  for (const t of [0, 1.5, 604_800]) assert.equal(checkTTL(t), t);
  for (const t of [-1, "7d", NaN, Infinity, null]) {
    assert.throws(() => checkTTL(t), (e: Error) => e instanceof TypeError && e.message.includes(JSON.stringify(t)), String(t));
  }
});

test("states: queued, syncing, synced, refused, unsubscribed until its TTL, none", () => {
  let list = [...subscribed([], "list:a", "normal", 60)];
  assert.deepEqual(stateOf(list[0], false), { state: "queued" });
  assert.deepEqual(stateOf(list[0], true), { state: "syncing" });
  list = markedSynced(list, "list:a");
  assert.deepEqual(stateOf(list[0], false), { state: "synced" });
  assert.deepEqual(stateOf(markedRefused(list, "list:a", "no stream")[0], false), { state: "refused", reason: "no stream" });
  list = markedUnsubscribed(list, "list:a", 1_000);
  assert.deepEqual(stateOf(list[0], false), { state: "unsubscribed", evictsAt: 61_000 });
  assert.deepEqual(stateOf(undefined, false), { state: "none" });
  assert.deepEqual(markedUnsubscribed(list, "list:a", 5_000), list, "unsubscribing again keeps the first time");
  assert.deepEqual(subscriptionsOf(JSON.parse(JSON.stringify(list))), list, "kept in the store");
});

test("an unsubscribed subscription leaves the queue and is not marked synced or refused; subscribing again within its TTL queues it, cursor kept", () => {
  let list = subscribed(subscribed([], "list:a", "high", 60), "list:b", "normal", 60);
  list = markedUnsubscribed(list, "list:a", 0);
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:b"]);
  assert.equal(markedSynced(list, "list:a")[0].synced, false);
  assert.equal(markedRefused(list, "list:a", "x")[0].refused, undefined);
  list = markedUnsubscribed(markedSynced(subscribed(list, "list:a", "high", 60), "list:a"), "list:a", 10);
  list = subscribed(list, "list:a", "low", 120);
  const a = list.find((s) => s.stream === "list:a")!;
  assert.deepEqual([a.unsubscribedAt, a.synced, a.priority, a.ttl], [undefined, false, "low", 120], "active, queued to catch up, with the new TTL");
  assert.deepEqual(downloadQueue(list).map((s) => s.stream), ["list:b", "list:a"]);
});

const key = (id: string) => `todos\u0000${id}`;

test("eviction waits for the TTL, then removes the rows no one else holds", () => {
  const list = markedUnsubscribed(subscribed([], "list:a", "normal", 60), "list:a", 1_000);
  const held = new Map([["list:a", [key("1"), key("2")]]]);
  const before = eviction(list, held, new Set(), () => false, () => true, 60_999);
  assert.deepEqual([before.remove, before.streams, before.list], [[], [], list], "within its TTL nothing leaves");
  const after = eviction(list, held, new Set(), () => false, () => true, 61_000);
  assert.deepEqual(after.remove, [key("1"), key("2")]);
  assert.deepEqual(after.streams, [{ stream: "list:a", removed: 2, keptForEdits: 0, ended: true }]);
  assert.deepEqual([after.list, [...after.held.keys()]], [[], []]);
});

test("eviction keeps rows another subscription (active or in its TTL) or the default stream holds, and rows with edits waiting", () => {
  let list = subscribed(subscribed(subscribed([], "list:a", "normal", 0), "list:b", "normal", 60), "list:c", "normal", 600);
  list = markedUnsubscribed(markedUnsubscribed(list, "list:a", 0), "list:c", 0);
  const held = new Map([
    ["list:a", [key("b-too"), key("c-too"), key("default"), key("edited"), key("gone"), key("alone")]],
    ["list:b", [key("b-too")]],
    ["list:c", [key("c-too")]],
  ]);
  const out = eviction(list, held, new Set([key("default")]), (k) => k === key("edited"), (k) => k !== key("gone"), 1);
  assert.deepEqual(out.remove, [key("alone")]);
  assert.deepEqual(out.streams, [{ stream: "list:a", removed: 1, keptForEdits: 1, ended: false }]);
  assert.deepEqual(out.held.get("list:a"), [key("edited")], "the edited row stays the stream's, for a later eviction");
  assert.deepEqual(out.list.map((s) => s.stream), ["list:a", "list:b", "list:c"], "it stays (unsubscribed) while a row waits");
  // The edit uploaded (or refused): the next eviction lets the row and the subscription go.
  const later = eviction(out.list, out.held, new Set(), () => false, () => true, 2);
  assert.deepEqual([later.remove, later.streams], [[key("edited")], [{ stream: "list:a", removed: 1, keptForEdits: 0, ended: true }]]);
});

test("two streams due at once: a row both held leaves with the second", () => {
  const list = markedUnsubscribed(markedUnsubscribed(subscribed(subscribed([], "list:a", "normal", 0), "list:b", "normal", 0), "list:a", 0), "list:b", 0);
  const held = new Map([["list:a", [key("both")]], ["list:b", [key("both")]]]);
  const out = eviction(list, held, new Set(), () => false, () => true, 0);
  assert.deepEqual(out.remove, [key("both")]);
  assert.deepEqual(out.streams.map((s) => [s.stream, s.removed]), [["list:a", 0], ["list:b", 1]]);
});

test("a restart after a spared revocation: queued again (not synced, a refusal forgotten), its priority, place and TTL kept; others untouched", () => {
  let list = subscribed(subscribed(subscribed([], "list:a", "high", 600), "list:b", "normal"), "list:c", "low");
  list = markedRefused(markedSynced(markedSynced(list, "list:a"), "list:b"), "list:c", "400");
  list = markedUnsubscribed(list, "list:b", 5);
  const after = markedRestarted(list, ["list:a", "list:b", "list:c"]);
  const a = after.find((s) => s.stream === "list:a")!;
  assert.deepEqual(a, { stream: "list:a", priority: "high", opened: 1, synced: false, ttl: 600 });
  assert.deepEqual(after.find((s) => s.stream === "list:b"), list.find((s) => s.stream === "list:b"), "one unsubscribed is not queued again");
  assert.deepEqual(stateOf(after.find((s) => s.stream === "list:c"), false), { state: "queued" }, "a refused one is asked again");
  assert.deepEqual(downloadQueue(after).map((s) => s.stream), ["list:a", "list:c"]);
});

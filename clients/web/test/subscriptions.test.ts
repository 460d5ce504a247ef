// Subscription priorities (FerryKit's queue): the order of the initial downloads and of
// the waits, and the two forms a store keeps its subscriptions in.
import { test } from "node:test";
import assert from "node:assert/strict";
import { subscribed, byPriority, downloadQueue, markedSynced, markedRefused, subscriptionsOf, checkPriority, Subscription, SubscriptionPriority } from "../src/subscriptions.js";
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
    { stream: "list:x", priority: "normal", opened: 3, synced: true },
  ], "an unknown priority reads as normal; entries of another shape are left out");
});

test("a priority other than the three is refused, naming it", () => {
  assert.equal(checkPriority(undefined), "normal");
  for (const p of ["low", "normal", "high"]) assert.equal(checkPriority(p), p);
  for (const p of ["urgent", 2, null, "HIGH"]) {
    assert.throws(() => checkPriority(p), (e: Error) => e instanceof TypeError && e.message.includes(JSON.stringify(p)), String(p));
  }
});

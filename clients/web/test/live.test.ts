// Continuous mode with subscriptions: the body of the one wait on every stream
// (`POST /v1/changes/wait`) and what its answer makes the engine fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { waitBody, afterWait, waitPlan, firstAnswer, waitCapOf, defaultWaitCap, maxWaits, WaitBody } from "../src/live.js";

test("the wait names the default stream and every subscription, each with its cursor", () => {
  assert.deepEqual(waitBody("c0", [["list:1", "c1"], ["set:7", "c7"]]), {
    wait: 20, since: { default: "c0", "list:1": "c1", "set:7": "c7" },
  });
  assert.deepEqual(waitBody("c0", [["list:1", "c1"]], 5), { wait: 5, since: { default: "c0", "list:1": "c1" } });
});

test("a stream with no cursor yet is not waited on; with none at all there is nothing to wait on", () => {
  assert.deepEqual(waitBody("c0", [["list:1", null], ["list:2", undefined], ["list:3", ""], ["list:4", "c4"]]), {
    wait: 20, since: { default: "c0", "list:4": "c4" },
  });
  assert.deepEqual(waitBody(null, [["list:1", "c1"]]), { wait: 20, since: { "list:1": "c1" } });
  assert.equal(waitBody(null, [["list:1", null]]), null);
  assert.equal(waitBody(undefined, []), null);
});

test("a subscription cannot take the default stream's key", () => {
  assert.deepEqual(waitBody("c0", [["default", "x"]]), { wait: 20, since: { default: "c0" } });
});

test("the answer fetches the streams it names, in subscription order", () => {
  const subs = ["list:1", "list:2", "list:3"];
  assert.deepEqual(afterWait({ changed: ["list:3", "default", "list:1"] }, subs), { default: true, streams: ["list:1", "list:3"] });
  assert.deepEqual(afterWait({ changed: ["list:2"] }, subs), { default: false, streams: ["list:2"] });
  assert.deepEqual(afterWait({ changed: ["default"] }, subs), { default: true, streams: [] });
});

test("an empty answer (the wait ran out, a shutdown) fetches nothing", () => {
  assert.deepEqual(afterWait({ changed: [] }, ["list:1"]), { default: false, streams: [] });
});

test("a stream unsubscribed meanwhile, or unknown, is not fetched", () => {
  assert.deepEqual(afterWait({ changed: ["list:9", "list:1"] }, ["list:1"]), { default: false, streams: ["list:1"] });
  assert.deepEqual(afterWait({ changed: ["list:9"] }, []), { default: false, streams: [] });
});

test("an answer of another shape fetches everything, as a round would", () => {
  for (const answer of [null, {}, { changed: "default" }, { changed: [1] }, []]) {
    assert.deepEqual(afterWait(answer, ["list:1", "list:2"]), { default: true, streams: ["list:1", "list:2"] }, JSON.stringify(answer));
  }
});

// Past the server's `live.max_wait_streams` a wait is 400: the device's streams are
// split into waits of at most that many, sent at once; the first answer ends them all.

const subscriptionsOf = (n: number): [string, string][] => Array.from({ length: n }, (_, i) => [`list:${i}`, `c${i}`]);

test("streams past the cap are split into waits of at most the cap, the default stream in the first, every stream once", () => {
  const plan = waitPlan("c", subscriptionsOf(249), 100);
  assert.deepEqual(plan.bodies.map((b) => Object.keys(b.since).length), [100, 100, 50]);
  assert.equal(Object.keys(plan.bodies[0].since)[0], "default");
  const keys = plan.bodies.flatMap((b) => Object.keys(b.since));
  assert.equal(new Set(keys).size, 250);
  assert.deepEqual(keys.slice(1, 4), ["list:0", "list:1", "list:2"], "in subscription order");
  assert.deepEqual(plan.unwaited, []);
  for (const b of plan.bodies) assert.equal(b.wait, 20);
  assert.equal(plan.bodies[2].since["list:248"], "c248", "each with its own cursor");
});

test("within the cap, one wait, exactly as waitBody", () => {
  assert.deepEqual(waitPlan("c", subscriptionsOf(99), 100).bodies, [waitBody("c", subscriptionsOf(99))]);
  assert.deepEqual(waitPlan("c", subscriptionsOf(2), 3).bodies.length, 1);
  assert.deepEqual(waitPlan("c", subscriptionsOf(3), 3).bodies.map((b) => Object.keys(b.since).length), [3, 1]);
  assert.deepEqual(waitPlan(null, [["list:1", null]]), { bodies: [], unwaited: [] }, "nothing to wait on");
});

test("a cap the server did not give (or that is not a whole number above 0) is the default, 100", () => {
  for (const cap of [undefined, 0, -3, 2.5, NaN]) {
    assert.deepEqual(waitPlan("c", subscriptionsOf(150), cap as number).bodies.map((b) => Object.keys(b.since).length), [100, 51], String(cap));
  }
  assert.equal(defaultWaitCap, 100);
});

test("at most maxWaits waits at once: the streams beyond are fetched after each answer instead", () => {
  const plan = waitPlan("c", subscriptionsOf(30), 5);
  assert.equal(plan.bodies.length, maxWaits);
  assert.equal(plan.bodies.flatMap((b) => Object.keys(b.since)).length, maxWaits * 5);
  assert.deepEqual(plan.unwaited, subscriptionsOf(30).slice(maxWaits * 5 - 1).map(([s]) => s));
});

/** A fake `fetch` of the waits: each held until the test answers it, or aborted. */
function fakeServer() {
  const held: { body: WaitBody; signal: AbortSignal; answer: (v: string) => void; settled: boolean }[] = [];
  const post = (body: WaitBody, signal: AbortSignal) => new Promise<string>((resolve, reject) => {
    const h = { body, signal, answer: (v: string) => { h.settled = true; resolve(v); }, settled: false };
    held.push(h);
    signal.addEventListener("abort", () => { h.settled = true; reject(new Error("aborted")); });
  });
  return { held, post };
}

test("every wait is sent at once; the first answer aborts the others and waits for them to end", async () => {
  const server = fakeServer();
  const outer = new AbortController();
  const bodies = waitPlan("c", subscriptionsOf(250), 100).bodies;
  const first = firstAnswer(bodies, server.post, outer.signal);
  assert.equal(server.held.length, 3, "sent together");
  assert.ok(server.held.every((h) => Object.keys(h.body.since).length <= 100));
  server.held[1].answer('{"changed":["list:150"]}');
  const { index, answer } = await first;
  assert.equal(index, 1);
  assert.equal(answer, '{"changed":["list:150"]}');
  assert.deepEqual(server.held.map((h) => h.signal.aborted), [true, false, true], "the others aborted, not the answer's");
  assert.ok(server.held.every((h) => h.settled), "every wait ended before it returned");
  outer.abort();
  assert.ok(server.held[1].signal.aborted, "a kick still cuts the answer's body short");
});

test("a kick or stop() aborts every wait", async () => {
  const server = fakeServer();
  const outer = new AbortController();
  const first = firstAnswer(waitPlan("c", subscriptionsOf(150), 100).bodies, server.post, outer.signal);
  outer.abort();
  await assert.rejects(first);
  assert.deepEqual(server.held.map((h) => h.signal.aborted), [true, true]);
});

test("a wait that fails fails them all, the others aborted", async () => {
  const outer = new AbortController();
  const signals: AbortSignal[] = [];
  const post = (_: WaitBody, signal: AbortSignal) => {
    signals.push(signal);
    return signals.length === 2 ? Promise.reject(new Error("network")) : new Promise<string>((_, reject) => signal.addEventListener("abort", () => reject(new Error("aborted"))));
  };
  await assert.rejects(firstAnswer(waitPlan("c", subscriptionsOf(150), 100).bodies, post, outer.signal), /network/);
  assert.ok(signals[0].aborted);
});

test("the cap is GET /v1's live.max_wait_streams; 100 from a server that does not say, or says something else than a whole number from 1", () => {
  assert.equal(waitCapOf({ resources: [], streams: [], live: { max_wait_streams: 7 } }), 7);
  assert.equal(waitCapOf({ resources: [], live: { max_wait_streams: 1 } }), 1);
  for (const doc of [{ resources: [] }, { live: {} }, { live: { max_wait_streams: 0 } }, { live: { max_wait_streams: "50" } },
                     { live: { max_wait_streams: 2.5 } }, { live: null }, null, []]) {
    assert.equal(waitCapOf(doc), 100, JSON.stringify(doc));
  }
});

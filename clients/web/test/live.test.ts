// Continuous mode with subscriptions: the body of the one wait on every stream
// (`POST /v1/changes/wait`) and what its answer makes the engine fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import { waitBody, afterWait } from "../src/live.js";

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

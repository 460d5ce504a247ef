// The keys a row is read by (src/indexes.ts, `FerryStore.query`): one per declared field
// holding a string or a finite number, and declarations compared whatever their order.
import { test } from "node:test";
import assert from "node:assert/strict";
import { indexKeys, normalIndexes, sameIndexes } from "../src/indexes.js";

test("a row's keys: one per declared field with a string or a finite number", () => {
  const indexes = normalIndexes({ todos: ["list_id", "rank", "done", "note", "size"] });
  const keys = indexKeys(indexes, "todos", { id: "t1", list_id: "L", rank: "U", done: true, note: null, size: 3 });
  assert.deepEqual(keys, [["todos", "list_id", "L"], ["todos", "rank", "U"], ["todos", "size", 3]]);
  assert.deepEqual(indexKeys(indexes, "todos", { id: "t2", size: Infinity }), []);
  assert.deepEqual(indexKeys(indexes, "lists", { id: "L", title: "x" }), [], "an undeclared resource has none");
});

test("declarations are canonical: order and repeats do not make a new one", () => {
  const a = normalIndexes({ todos: ["rank", "list_id", "rank"], lists: ["owner_id"] });
  const b = normalIndexes({ lists: ["owner_id"], todos: ["list_id", "rank"] });
  assert.ok(sameIndexes(a, b));
  assert.ok(!sameIndexes(a, normalIndexes({ todos: ["list_id"] })));
  assert.deepEqual(normalIndexes(undefined), {});
  assert.deepEqual(normalIndexes({ notes: [] }), {}, "a resource with no field is none");
});

test("a malformed declaration is a TypeError naming it", () => {
  assert.throws(() => normalIndexes(["todos"]), TypeError);
  assert.throws(() => normalIndexes({ todos: "list_id" }), /indexes\.todos/);
  assert.throws(() => normalIndexes({ todos: [""] }), /indexes\.todos/);
});

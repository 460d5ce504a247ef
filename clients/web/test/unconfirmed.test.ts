// The sweep at the end of an initial sync over a store that held rows (a restart after
// a 410): what no Index page brought leaves, but rows a subscription holds and rows with
// edits waiting.
import { test } from "node:test";
import assert from "node:assert/strict";
import { sweep, unconfirmed } from "../src/unconfirmed.js";
import { rowKeyOf } from "../src/planner.js";

const key = (id: string) => rowKeyOf("notes", id);

test("a row no page brought leaves; one a page brought stays", () => {
  const out = sweep([key("a"), key("b")], new Set([key("a")]), [], [], () => false);
  assert.deepEqual(out.remove, [key("b")]);
});

test("a row with an edit waiting stays, brought or not: the upload meets what the server has", () => {
  const out = sweep([key("a"), key("b")], new Set(), [], [], (k) => k === key("b"));
  assert.deepEqual(out.remove, [key("a")]);
});

test("a row a subscription holds is its stream's: it stays", () => {
  const out = sweep([key("a"), key("b"), key("c")], new Set(), [[key("a")], [key("b")]], [], () => false);
  assert.deepEqual(out.remove, [key("c")]);
  assert.deepEqual(unconfirmed([key("a"), key("c")], new Set(), [[key("a")]]), [key("c")]);
});

test("the default stream holds beside a subscription only what the pages brought (a row with edits waiting is the subscription's alone, as in FerryKit)", () => {
  const out = sweep([], new Set([key("a")]), [[key("a"), key("b"), key("c")]], [key("a"), key("b"), key("c")], (k) => k === key("c"));
  assert.deepEqual(out.heldByDefault, [key("a")]);
  assert.deepEqual(out.remove, []);
});

// The initial sync's slices: sized so one write transaction (which holds the app's reads
// of the store) takes about the budget, changing by at most half at a time.
import { test } from "node:test";
import assert from "node:assert/strict";
import { nextSlice } from "../src/engine.js";

test("a slice that took the budget stays; one that took twice as long halves", () => {
  assert.equal(nextSlice(100, 6, 6), 100);
  assert.equal(nextSlice(100, 12, 6), 50);
  assert.equal(nextSlice(100, 8, 6), 75);
});

test("a slow commit halves at most; a fast one doubles at most", () => {
  assert.equal(nextSlice(100, 600, 6), 50);
  assert.equal(nextSlice(100, 0.5, 6), 200);
  assert.equal(nextSlice(100, 0, 6), 200);
});

test("between 20 and 1,000 rows", () => {
  assert.equal(nextSlice(30, 100, 6), 20);
  assert.equal(nextSlice(20, 100, 6), 20);
  assert.equal(nextSlice(800, 1, 6), 1000);
});

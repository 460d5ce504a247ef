// The initial sync's slices (src/slices.ts): sized so that a write transaction (which
// holds the app's reads of the store) runs about the budget, by what a row costs in the
// last slices' running transactions, not by the last slice alone.
import { test } from "node:test";
import assert from "node:assert/strict";
import { SliceSizer, sliceFloor, sliceCeiling } from "../src/slices.js";

/** The sizes a sizer picks over `slices` slices whose transactions run `ran(rows, i)` ms. */
function run(ran: (rows: number, i: number) => number, slices = 60, first = 100, budget = 6): number[] {
  const sizer = new SliceSizer(first, budget);
  const sizes = [sizer.rows];
  for (let i = 0; i < slices; i++) sizes.push(sizer.record(sizes[i], ran(sizes[i], i)));
  return sizes;
}

test("slices settle where a transaction runs the budget", () => {
  // 1 ms a transaction, 0.01 ms a row: 500 rows run 6 ms.
  const sizes = run((rows) => 1 + 0.01 * rows);
  for (const rows of sizes.slice(-10)) assert.ok(Math.abs(rows - 500) <= 10, `${sizes.join(" ")}`);
  // 0.1 ms a row and nothing else: 60 rows.
  assert.equal(run((rows) => 0.1 * rows).pop(), 60);
});

test("one slow commit among the slices does not move the size", () => {
  // The rule on the last slice alone halves it (a 600 ms commit is the machine, not the rows).
  const sizes = run((rows, i) => (i === 40 ? 600 : 0.1 * rows));
  assert.deepEqual(sizes.slice(38), Array(sizes.length - 38).fill(60));
});

test("a loaded machine, one transaction in four waiting 30 ms for a CPU: a steady size, not a swing", () => {
  // The median row's cost is the others': the size stays where they put it (0.05 ms a
  // row: 120), where the rule on the last slice alone shrinks it at each slow one.
  const sizes = run((rows, i) => 0.05 * rows + (i % 4 ? 0 : 30));
  assert.deepEqual(sizes.slice(-10), Array(10).fill(120), `${sizes.join(" ")}`);
});

test("the last, short slice of a page does not shrink the next page's", () => {
  // 60 rows a slice; a page's last slice of 5 rows ran 0.5 ms: the next stays at 60.
  const sizer = new SliceSizer(60, 6);
  for (let i = 0; i < 5; i++) sizer.record(60, 6);
  assert.equal(sizer.record(5, 0.5), 60);
});

test("twice or half the last size at most, between the floor and the ceiling", () => {
  assert.equal(new SliceSizer(100, 6).record(100, 0.01), 200);
  assert.equal(new SliceSizer(100, 6).record(100, 600), 50);
  // A transaction whose own cost is over the budget: the floor.
  assert.equal(run((rows) => 7 + 0.35 * rows).pop(), sliceFloor);
  assert.equal(run(() => 0.01).pop(), sliceCeiling);
});

// Every rank vector FerryRank generated must come out of the TypeScript port identically.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as Rank from "../src/rank.js";
import { load } from "./conformance.js";

interface Between { a: string | null; b: string | null; key?: string; error?: string }
interface Spread { n: number; a: string | null; b: string | null; keys?: string[]; error?: string }
interface Concurrent { seed: number; start: string[]; devices: { device: string; inserts: [number, string, string][] }[]; merged: string[] }
const vectors = load<{ between: Between[]; spread: Spread[]; concurrent: Concurrent[] }>("ranks.json");

function outcome(f: () => unknown): { value?: unknown; error?: string } {
  try {
    return { value: f() };
  } catch (e) {
    if (e instanceof Rank.RankError) return { error: e.reason };
    throw e;
  }
}

test("the suite has thousands of between vectors", () => {
  assert.ok(vectors.between.length > 3000, `${vectors.between.length}`);
});

test("between: every vector", () => {
  let failures = 0;
  for (const v of vectors.between) {
    const got = outcome(() => Rank.between(v.a, v.b));
    const ok = v.error !== undefined ? got.error === v.error : got.value === v.key;
    if (!ok && failures++ < 5) assert.fail(`between(${v.a}, ${v.b}): expected ${v.key ?? v.error}, got ${got.value ?? got.error}`);
  }
  assert.equal(failures, 0);
});

test("generated keys are valid and strictly between their bounds", () => {
  for (const v of vectors.between) {
    if (v.key === undefined) continue;
    Rank.validate(v.key);
    if (v.a !== null) assert.ok(v.a < v.key);
    if (v.b !== null) assert.ok(v.key < v.b);
  }
});

test("spread: every vector", () => {
  for (const v of vectors.spread) {
    const got = outcome(() => Rank.spread(v.n, v.a, v.b));
    if (v.error !== undefined) assert.equal(got.error, v.error, `spread(${v.n}, ${v.a}, ${v.b})`);
    else assert.deepEqual(got.value, v.keys, `spread(${v.n}, ${v.a}, ${v.b})`);
  }
});

test("concurrent offline inserts make the same keys and merge into the same order", () => {
  for (const scenario of vectors.concurrent) {
    const all = scenario.start.map((rank, i) => ({ id: `s${i}`, rank }));
    for (const device of scenario.devices) {
      const list = scenario.start.map((rank, i) => ({ id: `s${i}`, rank }));
      for (const [index, id, key] of device.inserts) {
        const made = Rank.between(index > 0 ? list[index - 1].rank : null, index < list.length ? list[index].rank : null);
        assert.equal(made, key, `seed ${scenario.seed} device ${device.device} row ${id}`);
        list.splice(index, 0, { id, rank: made });
        all.push({ id, rank: made });
      }
    }
    all.sort((x, y) => Rank.compare(x.rank, y.rank) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0));
    assert.deepEqual(all.map((r) => r.id), scenario.merged, `seed ${scenario.seed}`);
  }
});

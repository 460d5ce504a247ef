// The query cache (src/querycache.ts): answers kept in step with numbered commits, fills
// racing commits, announcements out of order, and its limits.
import { test } from "node:test";
import assert from "node:assert/strict";
import { QueryCache, Commit, RowChange, commitFor, keyOf, packCommit } from "../src/querycache.js";
import { IndexKey } from "../src/indexes.js";
import { RowData } from "../src/json.js";

const todo = (id: string, list: string, title = id): RowChange => ({ resource: "todos", id, data: { id, list_id: list, title }, by: [["todos", "list_id", list]] });
const gone = (id: string): RowChange => ({ resource: "todos", id, deleted: true });
const ids = (rows: RowData[] | undefined) => rows?.map((r) => r.id);

test("a fill is kept; the next commits patch it: a row added, one moved out, one deleted, in id order", () => {
  const cache = new QueryCache();
  assert.equal(cache.get("todos", "list_id", "A"), undefined);
  assert.ok(cache.fill("todos", "list_id", "A", 3, [{ id: "t2", data: { id: "t2", list_id: "A" } }, { id: "t5", data: { id: "t5", list_id: "A" } }]));
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t2", "t5"]);
  cache.apply({ seq: 4, rows: [todo("t1", "A"), todo("t5", "B"), todo("t9", "B")] });
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t1", "t2"]);
  cache.apply({ seq: 5, rows: [gone("t2"), todo("t1", "A", "renamed")] });
  assert.deepEqual(cache.get("todos", "list_id", "A"), [{ id: "t1", list_id: "A", title: "renamed" }]);
  // A commit of another resource, or of none, moves it on too: the next one still patches.
  cache.apply({ seq: 6, rows: [{ resource: "lists", id: "A", data: { id: "A" }, by: [] }] });
  cache.apply({ seq: 7, rows: [] });
  cache.apply({ seq: 8, rows: [todo("t0", "A")] });
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t0", "t1"]);
});

test("a fill during which a newer commit was heard is answered, not kept (the race of a fill and a slice)", () => {
  const cache = new QueryCache();
  // The fill's read started, a slice (commit 4) committed and was heard, then the read answered the state at 3.
  cache.apply({ seq: 4, rows: [todo("t1", "A")] });
  assert.equal(cache.fill("todos", "list_id", "A", 3, []), false);
  assert.equal(cache.get("todos", "list_id", "A"), undefined, "read again next time");
  // Read after it: the state at 4, kept.
  assert.ok(cache.fill("todos", "list_id", "A", 4, [{ id: "t1", data: { id: "t1", list_id: "A" } }]));
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t1"]);
});

test("a commit the fill already holds, heard after it, changes nothing", () => {
  const cache = new QueryCache();
  // The read ran after commit 5 committed, but its announcement came after the read's answer.
  assert.ok(cache.fill("todos", "list_id", "A", 5, [{ id: "t1", data: { id: "t1", list_id: "A", title: "new" } }]));
  cache.apply({ seq: 5, rows: [todo("t1", "A", "new")] });
  cache.apply({ seq: 4, rows: [todo("t1", "A", "old"), todo("t7", "A")] });
  assert.deepEqual(cache.get("todos", "list_id", "A"), [{ id: "t1", list_id: "A", title: "new" }]);
});

test("announcements out of order: a gap drops the key (never a newer row beside one a missing commit replaced)", () => {
  const cache = new QueryCache();
  cache.fill("todos", "list_id", "A", 5, [{ id: "t1", data: { id: "t1", list_id: "A" } }]);
  cache.fill("todos", "list_id", "B", 5, []);
  // Commit 7 (the Worker's slice) heard before 6 (another tab's write).
  cache.apply({ seq: 7, rows: [todo("t2", "A")] });
  assert.equal(cache.get("todos", "list_id", "A"), undefined);
  assert.equal(cache.get("todos", "list_id", "B"), undefined);
  cache.apply({ seq: 6, rows: [gone("t1")] });
  assert.equal(cache.get("todos", "list_id", "A"), undefined);
});

test("a commit that does not tell its rows drops every key; a row of an undeclared kind drops its resource's", () => {
  const cache = new QueryCache();
  cache.fill("todos", "list_id", "A", 1, []);
  cache.fill("notes", "list_id", "A", 1, []);
  cache.apply({ seq: 2, rows: [{ resource: "notes", id: "n1" }] });
  assert.deepEqual(cache.size, { keys: 1, rows: 0 });
  assert.ok(cache.get("todos", "list_id", "A"));
  cache.apply({ seq: 3, rows: null });
  assert.deepEqual(cache.size, { keys: 0, rows: 0 });
});

test("the limits: the least recently read key leaves first; rows counted across keys", () => {
  const cache = new QueryCache(2, 5);
  const rows = (n: number, list: string) => Array.from({ length: n }, (_, i) => ({ id: `${list}${i}`, data: { id: `${list}${i}`, list_id: list } }));
  cache.fill("todos", "list_id", "A", 1, rows(1, "A"));
  cache.fill("todos", "list_id", "B", 1, rows(1, "B"));
  cache.get("todos", "list_id", "A");  // A read last: B leaves for C
  cache.fill("todos", "list_id", "C", 1, rows(1, "C"));
  assert.ok(cache.get("todos", "list_id", "A"));
  assert.equal(cache.get("todos", "list_id", "B"), undefined);
  assert.ok(cache.get("todos", "list_id", "C"));
  // Four rows more for A: five in all (A's 5, C's 1 is six): C, read least recently, leaves.
  cache.get("todos", "list_id", "A");
  cache.apply({ seq: 2, rows: ["A1", "A2", "A3", "A4"].map((id) => todo(id, "A")) });
  assert.deepEqual(cache.size, { keys: 1, rows: 5 });
  assert.equal(cache.get("todos", "list_id", "C"), undefined);
  assert.equal(cache.fill("todos", "list_id", "D", 2, rows(6, "D")), false, "more rows than the limit: not kept");
});

test("simulated: commits heard late and out of order, fills racing them: every answer is the store's state at some commit, never older than one answered before", () => {
  let seed = 7;
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  for (let round = 0; round < 200; round++) {
    const cache = new QueryCache(3, 1000);
    const lists = ["A", "B", "C", "D"];
    // The store: each commit's state of every row.
    const states: Map<string, RowData>[] = [new Map()];
    const pending: Commit[] = [];  // committed, not heard yet
    const fills: { list: string; seq: number }[] = [];
    const answered = new Map<string, number>();  // per list: the oldest commit its next answer may be
    const stateOf = (seq: number, list: string) => [...states[seq].values()].filter((r) => r.list_id === list).sort((a, b) => (String(a.id) < String(b.id) ? -1 : 1));
    let heard = 0;  // the newest commit heard: a read that starts now holds it or a newer one
    for (let step = 0; step < 120; step++) {
      const r = random();
      if (r < 0.3) {
        // A commit of one to three rows.
        const next = new Map(states[states.length - 1]);
        const rows: RowChange[] = [];
        // Each row's keys before its change (a row written twice: before the second).
        const was: (IndexKey[] | undefined)[] = [];
        for (let i = 0; i < 1 + Math.floor(random() * 3); i++) {
          const id = `t${Math.floor(random() * 12)}`;
          const before = next.get(id);
          was.push(random() < 0.1 ? undefined : before ? [["todos", "list_id", before.list_id as string]] : []);
          if (random() < 0.2) { next.delete(id); rows.push(gone(id)); } else {
            const list = lists[Math.floor(random() * lists.length)], title = `v${step}`;
            next.set(id, { id, list_id: list, title });
            rows.push(todo(id, list, title));
          }
        }
        states.push(next);
        const commit: Commit = { seq: states.length - 1, rows: random() < 0.05 ? null : rows };
        // As a tab announces it, as the channel carries it (text), or as the initial sync's
        // Worker sends its tab (cut to the keys it was last told, which may lag).
        const how = random();
        pending.push(how < 0.5 ? commit : how < 0.75 ? packCommit(commit) : commitFor(commit, was, new Set(cache.keys())));
      } else if (r < 0.55 && pending.length) {
        // One heard: mostly the oldest, sometimes another (two writers' channels).
        const i = random() < 0.8 ? 0 : Math.floor(random() * pending.length);
        const commit = pending.splice(i, 1)[0];
        cache.apply(commit);
        heard = Math.max(heard, commit.seq);
      } else if (r < 0.8 && fills.length) {
        // A fill answers (fills may answer out of order): the app sees its state, the cache may keep it.
        const fill = fills.splice(Math.floor(random() * fills.length), 1)[0];
        cache.fill("todos", "list_id", fill.list, fill.seq, stateOf(fill.seq, fill.list).map((row) => ({ id: row.id as string, data: row })));
        answered.set(fill.list, Math.max(answered.get(fill.list) ?? 0, fill.seq));
      } else {
        // The app reads: from the cache if kept, else a fill starts: its read holds the
        // state of a commit between the newest heard and the newest made.
        const list = lists[Math.floor(random() * lists.length)];
        const kept = cache.get("todos", "list_id", list);
        if (!kept) {
          fills.push({ list, seq: heard + Math.floor(random() * (states.length - heard)) });
          continue;
        }
        const from = answered.get(list) ?? 0;
        const at = [...states.keys()].slice(from).find((seq) => JSON.stringify(stateOf(seq, list)) === JSON.stringify(kept));
        assert.notEqual(at, undefined, `round ${round} step ${step}: ${list}'s answer ${JSON.stringify(kept)} is no state since commit ${from}`);
        answered.set(list, at!);
      }
    }
  }
});

test("a commit cut to keys (the initial sync's Worker to its tab): rows that have a key, rows that had one as left, nothing else", () => {
  const keys = new Set([keyOf("todos", "list_id", "A"), keyOf("todos", "list_id", "B")]);
  const commit: Commit = { seq: 9, rows: [
    todo("t1", "A"),                                      // has A: with its data
    todo("t2", "C"),                                      // had A (was), has C: left
    todo("t3", "C"),                                      // had and has neither: not sent
    gone("t4"),                                           // deleted, had B: sent
    gone("t5"),                                           // deleted, had neither: not sent
    todo("t6", "C"),                                      // before not known: left
    { resource: "lists", id: "A", data: { id: "A" }, by: [] },  // no key of its resource kept: not sent
    { resource: "todos", id: "t7" },                      // not told how: sent as it is
  ] };
  const was: (IndexKey[] | undefined)[] = [[], [["todos", "list_id", "A"]], [["todos", "list_id", "D"]], [["todos", "list_id", "B"]], [], undefined, [], undefined];
  const cut = commitFor(commit, was, keys);
  assert.equal(cut.seq, 9);
  assert.deepEqual(cut.keys?.sort(), [...keys].sort());
  assert.deepEqual(cut.rows, [
    todo("t1", "A"),
    { resource: "todos", id: "t2", left: true },
    { resource: "todos", id: "t4", deleted: true },
    { resource: "todos", id: "t6", left: true },
    { resource: "todos", id: "t7" },
  ]);
  assert.deepEqual(commitFor({ seq: 3, rows: null }, null, keys), { seq: 3, rows: null }, "not told: not told");
  assert.deepEqual(commitFor(commit, was, new Set()).rows, [], "no key kept: no row");
});

test("a cut commit patches the keys it covers and drops the others; a row left goes", () => {
  const cache = new QueryCache();
  cache.fill("todos", "list_id", "A", 1, [{ id: "t2", data: { id: "t2", list_id: "A" } }]);
  cache.fill("todos", "list_id", "B", 1, []);
  cache.apply({ seq: 2, rows: [todo("t1", "A"), { resource: "todos", id: "t2", left: true }], keys: [keyOf("todos", "list_id", "A")] });
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t1"]);
  assert.equal(cache.get("todos", "list_id", "B"), undefined, "B was not among the commit's keys: it cannot follow it");
  assert.equal(cache.counts.drops, 1);
});

test("a packed commit (the channel's) patches as its rows would; a resource no entry is of is not parsed; not told drops", () => {
  const cache = new QueryCache();
  cache.fill("todos", "list_id", "A", 1, [{ id: "t2", data: { id: "t2", list_id: "A" } }]);
  const packed = packCommit({ seq: 2, rows: [todo("t1", "A"), todo("t2", "B"), { resource: "lists", id: "A", data: { id: "A" }, by: [] }] });
  assert.equal(packed.rows, null, "an older FerryWeb reads rows alone: it drops its keys");
  assert.equal(typeof packed.packed?.todos, "string");
  cache.apply({ ...packed, packed: { ...packed.packed, lists: "not JSON: never parsed" } });
  assert.deepEqual(ids(cache.get("todos", "list_id", "A")), ["t1"]);
  cache.apply(packCommit({ seq: 3, rows: null }));
  assert.equal(cache.get("todos", "list_id", "A"), undefined);
});

test("the keys held are told once per task as they change; a kept row is found by id", async () => {
  const cache = new QueryCache(2, 100);
  const told: string[][] = [];
  cache.onKeys = (keys) => told.push(keys);
  cache.fill("todos", "list_id", "A", 1, [{ id: "t1", data: { id: "t1", list_id: "A" } }]);
  cache.fill("todos", "list_id", "B", 1, []);
  await Promise.resolve();
  assert.deepEqual(told, [[keyOf("todos", "list_id", "A"), keyOf("todos", "list_id", "B")]]);
  assert.deepEqual(cache.row("todos", "t1"), { id: "t1", list_id: "A" });
  assert.equal(cache.row("todos", "t9"), undefined);
  assert.equal(cache.row("notes", "t1"), undefined);
  cache.apply({ seq: 2, rows: [todo("t1", "B", "moved")] });
  assert.deepEqual(cache.row("todos", "t1"), { id: "t1", list_id: "B", title: "moved" });
  cache.apply({ seq: 3, rows: [gone("t1")] });
  assert.equal(cache.row("todos", "t1"), undefined);
  cache.apply({ seq: 5, rows: [] });  // a gap: both dropped
  await Promise.resolve();
  assert.deepEqual(told[told.length - 1], []);
  assert.equal(told.length, 2);
});

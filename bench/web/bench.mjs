// The browser half of bench/web/run.sh: drives headless Chromium (clients/web/browser's
// DevTools driver and same-origin proxy, with no faults) and prints one line per figure.
import { Browser } from "../../clients/web/browser/cdp.mjs";
import { startHarness } from "../../clients/web/browser/harness.mjs";

const port = Number(process.env.FERRY_PORT);
const token = process.env.FERRY_TOKEN;
const rows = Number(process.env.FERRYWEB_BENCH_ROWS ?? 100000);
const { server, faults, origin } = await startHarness(port);
const browser = await Browser.launch();
const url = `${origin}/?token=${encodeURIComponent(token)}`;
// The default context: its IndexedDB is on disk (a new context's would be in memory).
const page = await browser.pageIn(undefined, url);
const print = (line) => console.log(`ferryweb-bench: ${line}`);

// One list's id, and its todos' ids (the old read, by id, FERRYWEB_BENCH_READ=ids).
const list = await page.eval(`fetch("/v1/lists?limit=1", {headers: {Authorization: "Bearer ${token}"}}).then((r) => r.json()).then((b) => b.data[0].id)`);
const ids = await page.eval(`fetch("/v1/todos?limit=100&list_id=${list}", {headers: {Authorization: "Bearer ${token}"}}).then((r) => r.json()).then((b) => b.data.map((t) => t.id))`);

// FERRYWEB_BENCH_WORKER=0: the initial sync on the main thread (as before its Worker), to compare.
const worker = process.env.FERRYWEB_BENCH_WORKER !== "0";
// FERRYWEB_BENCH_SLICE=100 FERRYWEB_BENCH_BUDGET=0: fixed slices of 100 rows (as before their budget).
const slice = process.env.FERRYWEB_BENCH_SLICE ? `, initialSyncSlice: ${Number(process.env.FERRYWEB_BENCH_SLICE)}` : "";
const budget = process.env.FERRYWEB_BENCH_BUDGET ? `, initialSyncBudget: ${Number(process.env.FERRYWEB_BENCH_BUDGET)}` : "";
// The read during the sync: "query" (the default), the app's read and FerryKit's (its
// `WHERE set_id = ? ORDER BY rank, id`): one list's todos by their list, in rank order;
// "ids": the same 100 rows by id, 100 gets in one transaction (the read before `query`).
const readMode = process.env.FERRYWEB_BENCH_READ ?? "query";
if (!["query", "ids"].includes(readMode)) throw new Error(`FERRYWEB_BENCH_READ: query or ids, not ${readMode}`);
await page.eval(`device('bench', { pageSize: 1000, initialSyncWorker: ${worker}${slice}${budget} }, { indexes: { todos: ["list_id"] } })`);
// The reads, and their parts: each resolves to the ms from its start to its answer.
await page.eval(`(() => {
  const list = ${JSON.stringify(list)}, ids = ${JSON.stringify(ids)};
  const byRank = (a, b) => ferry.Rank.compare(a.rank, b.rank) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
  const gets = (tx, keys) => Promise.all(keys.map((id) => new Promise((ok, fail) => { const r = tx.get(["todos", id]); r.onsuccess = () => ok(r.result); r.onerror = fail; })));
  const timed = (read) => async () => { const t = performance.now(); const rows = await read(); window.lastRead = rows.length; return performance.now() - t; };
  window.reads = {
    // The app's read: the list's todos by its field (one getAll on the rows' index), in rank order.
    query: timed(() => dev.store.query("todos", "list_id", list).then((ts) => ts.sort(byRank))),
    // The read before: 100 gets by id in one transaction over the store's four object stores.
    ids: timed(() => gets(dev.store.tx("readonly").objectStore("rows"), ids)),
    // The same in a transaction of the rows alone.
    idsRows: timed(() => gets(dev.store.db.transaction("rows", "readonly").objectStore("rows"), ids)),
    // One get: a transaction and one request, the fixed cost of any read.
    one: timed(() => gets(dev.store.db.transaction("rows", "readonly").objectStore("rows"), ids.slice(0, 1))),
  };
  return true;
})()`);
faults.urls.length = 0;
const sync = await page.eval(`(async () => {
  // The app's main thread: every 5 ms, read one list's 100 todos and time it from the
  // moment it was due: a busy main thread counts.
  const read = reads[${JSON.stringify(readMode)}];
  const latencies = [];
  let stop = false;
  const reader = (async () => {
    while (!stop) {
      latencies.push(await read());
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  // The main thread alone: how late a 5 ms timer fires (the reads wait for it and for the store).
  const late = [];
  const ticker = (async () => {
    while (!stop) {
      const due = performance.now() + 5;
      await new Promise((r) => setTimeout(r, 5));
      late.push(Math.max(0, performance.now() - due));
    }
  })();
  // A "changed" event per slice applied: the time between two is one slice's transaction (and what runs between).
  const marks = [];
  dev.engine.on((e) => e.type === "changed" && marks.push(performance.now()));
  const start = performance.now();
  await dev.engine.sync();
  const seconds = (performance.now() - start) / 1000;
  stop = true;
  await Promise.all([reader, ticker]);
  // The query cache's counts (a FerryWeb without one: none).
  const cache = dev.store.cache ? JSON.stringify(dev.store.cache.counts) : "none";
  const [todos, lists] = await Promise.all([dev.store.all("todos"), dev.store.all("lists")]);
  const at = (list, p) => { list.sort((a, b) => a - b); return list[Math.min(list.length - 1, Math.floor(list.length * p))]; };
  const gaps = marks.slice(1).map((m, i) => m - marks[i]);
  return { seconds, received: todos.length + lists.length, reads: latencies.length, p50: at(latencies, 0.5), p99: at(latencies, 0.99), max: latencies[latencies.length - 1],
           late50: at(late, 0.5), late99: at(late, 0.99), lateMax: late[late.length - 1],
           cache, slices: gaps.length + 1, slice50: at(gaps, 0.5), slice90: at(gaps, 0.9) };
})()`);
// The reads alone, with nothing else running (the floor the machine sets), and their
// parts, interleaved so that each meets the same moments: right after the sync, and
// again after FERRYWEB_BENCH_SETTLE seconds (20) of nothing, once the store's own
// background work (its files' compaction, checkpoints) has had time to end.
const alone = (label) => page.eval(`(async () => {
  const kinds = Object.keys(reads), times = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let i = 0; i < 200; i++) {
    for (const k of kinds) { times[k].push(await reads[k]()); await new Promise((r) => setTimeout(r, 5)); }
  }
  const at = (list, p) => { list.sort((a, b) => a - b); return list[Math.min(list.length - 1, Math.floor(list.length * p))]; };
  // performance.now()'s step: the finest time these figures can tell.
  let step = Infinity;
  for (let i = 0, t = performance.now(); i < 100000 && step === Infinity; i++) { const u = performance.now(); if (u > t) step = u - t; }
  return ${JSON.stringify(label)} + ": " + kinds.map((k) => k + " p50 " + at(times[k], 0.5).toFixed(2) + " / p99 " + at(times[k], 0.99).toFixed(2) + " / max " + at(times[k], 1).toFixed(2) + " ms").join("; ") + "; performance.now() step " + step.toFixed(3) + " ms";
})()`);
const right = await alone("right after the sync");
const settle = Number(process.env.FERRYWEB_BENCH_SETTLE ?? 20);
await new Promise((r) => setTimeout(r, settle * 1000));
const settled = await alone(`after ${settle} s of nothing`);
const rowsRead = await page.eval("reads.query().then(() => window.lastRead)");
const requests = faults.urls.length;
print(`options: initialSyncWorker ${worker}${slice}${budget}`);
print(`initial sync of ${sync.received} rows (${rows / 100} lists, ${rows} todos) ${worker ? "in a Worker" : "on the main thread"}: ${sync.seconds.toFixed(2)} s, ${requests} requests, ${Math.round(sync.received / sync.seconds)} rows/s`);
print(`reads of one list's 100 todos (${readMode}) every 5 ms during it: ${sync.reads} reads, p50 ${sync.p50.toFixed(2)} ms, p99 ${sync.p99.toFixed(2)} ms, max ${sync.max.toFixed(2)} ms; query cache during it: ${sync.cache}`);
print(`the main thread meanwhile: a 5 ms timer late by p50 ${sync.late50.toFixed(2)} ms, p99 ${sync.late99.toFixed(2)} ms, max ${sync.lateMax.toFixed(2)} ms; ${sync.slices} slices applied (${Math.round(sync.received / sync.slices)} rows each on average), one every p50 ${sync.slice50.toFixed(1)} ms, p90 ${sync.slice90.toFixed(1)} ms`);
print(`the reads alone (query: the list's todos by field; ids: 100 gets in one transaction of the four stores; idsRows: of the rows alone; one: one get), ${right}`);
print(`the reads alone, ${settled}`);
if (sync.received !== rows + rows / 100) throw new Error(`expected ${rows + rows / 100} rows, the store has ${sync.received}`);
if (rowsRead !== 100) throw new Error(`the list's read found ${rowsRead} todos, not 100`);

if (process.env.FERRYWEB_BENCH_EDITS === "0") { await browser.close(); server.close(); process.exit(0); }
// 10,000 offline edits across 1,000 rows (FerryKit's tenThousandOfflineEditsAcrossAThousandRows),
// in a fresh store so the 100,000 rows above are not in the way.
const edits = await browser.pageIn(undefined, url);
await edits.eval("device('edits')");
await edits.eval("dev.engine.sync()");
await edits.eval(`(async () => {
  const [list] = await dev.store.write([{resource: "lists", kind: "create", fields: {title: "bench"}}]);
  window.ids = [];
  for (let i = 0; i < 1000; i++) ids.push(...await dev.store.write([{resource: "todos", kind: "create", fields: {list_id: list, title: "w" + i, rank: "U"}}]));
  await dev.engine.sync();
  return (await dev.store.operations()).length;
})()`);
// The time spent waiting on the server's answers (up to their headers), to tell it from the client's own.
await edits.eval(`(() => {
  window.serverMs = 0;
  dev.engine.options.fetch = async (...args) => { const t = performance.now(); try { return await fetch(...args); } finally { serverMs += performance.now() - t; } };
  return true;
})()`);
/**
 * 10,000 edits written offline by `write` (an expression of an async function of the
 * edit's number 0-9,999 and its todo's id, awaited in turn), then uploaded.
 */
async function offlineEdits(label, write) {
  faults.seen.length = 0;
  faults.offline = true;
  const written = await edits.eval(`(async () => {
    const write = ${write};
    const start = performance.now();
    for (let edit = 0; edit < 10000; edit++) await write(edit, ids[edit % ids.length]);
    return (performance.now() - start) / 1000;
  })()`);
  faults.offline = false;
  faults.seen.length = 0;
  const upload = await edits.eval(`(async () => {
    serverMs = 0;
    const start = performance.now();
    await dev.engine.sync();
    return { seconds: (performance.now() - start) / 1000, server: serverMs / 1000, left: (await dev.store.operations()).length };
  })()`);
  const writes = faults.seen.filter((s) => !s.startsWith("GET"));
  const byMethod = {};
  for (const s of writes) { const k = s.split(" ").slice(0, 2).join(" "); byMethod[k] = (byMethod[k] ?? 0) + 1; }
  print(`10,000 offline edits across 1,000 todos, ${label}: written locally in ${written.toFixed(2)} s, uploaded in ${upload.seconds.toFixed(2)} s (${upload.server.toFixed(2)} s of it waiting on the server) with ${writes.length} write requests (${JSON.stringify(byMethod)}), ${upload.left} left in the outbox`);
  if (upload.left !== 0) throw new Error("the outbox did not empty");
}
const edit = (i) => `{resource: "todos", id, kind: "update", fields: {title: "edit " + ${i}}}`;
await offlineEdits("each its own store.write", `(n, id) => dev.store.write([${edit("n")}])`);
// writeMany (a FerryWeb before it has none): the same edits 100 a call, then all in one.
if (await edits.eval("typeof dev.store.writeMany === 'function'")) {
  await offlineEdits("store.writeMany of 100 edits", `(() => { let batch = []; return (n, id) => { batch.push(${edit("n")}); if (batch.length < 100) return null; const b = batch; batch = []; return dev.store.writeMany(b); }; })()`);
  await offlineEdits("one store.writeMany of 10,000 edits", `(() => { const all = []; return (n, id) => { all.push(${edit("n")}); return n === 9999 ? dev.store.writeMany(all) : null; }; })()`);
}

await browser.close();
server.close();
process.exit(0);

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

// The ids of one list's todos, the 100 rows the reader reads (FerryKit reads a set's terms).
const list = await page.eval(`fetch("/v1/lists?limit=1", {headers: {Authorization: "Bearer ${token}"}}).then((r) => r.json()).then((b) => b.data[0].id)`);
const ids = await page.eval(`fetch("/v1/todos?limit=100&list_id=${list}", {headers: {Authorization: "Bearer ${token}"}}).then((r) => r.json()).then((b) => b.data.map((t) => t.id))`);

// FERRYWEB_BENCH_WORKER=0: the initial sync on the main thread (as before its Worker), to compare.
const worker = process.env.FERRYWEB_BENCH_WORKER !== "0";
// FERRYWEB_BENCH_SLICE=100 FERRYWEB_BENCH_BUDGET=0: fixed slices of 100 rows (as before their budget).
const slice = process.env.FERRYWEB_BENCH_SLICE ? `, initialSyncSlice: ${Number(process.env.FERRYWEB_BENCH_SLICE)}` : "";
const budget = process.env.FERRYWEB_BENCH_BUDGET ? `, initialSyncBudget: ${Number(process.env.FERRYWEB_BENCH_BUDGET)}` : "";
await page.eval(`device('bench', { pageSize: 1000, initialSyncWorker: ${worker}${slice}${budget} })`);
faults.urls.length = 0;
const sync = await page.eval(`(async () => {
  const ids = ${JSON.stringify(ids)};
  // The app's main thread: every 5 ms, read one list's 100 todos (by id, in one
  // transaction) and time it from the moment it was due: a busy main thread counts.
  const latencies = [];
  let stop = false;
  const reader = (async () => {
    while (!stop) {
      const due = performance.now();
      const tx = dev.store.tx("readonly").objectStore("rows");
      await Promise.all(ids.map((id) => new Promise((ok, fail) => { const r = tx.get(["todos", id]); r.onsuccess = ok; r.onerror = fail; })));
      latencies.push(performance.now() - due);
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
  const [todos, lists] = await Promise.all([dev.store.all("todos"), dev.store.all("lists")]);
  // The same reads with nothing else running: the floor the machine sets.
  const idle = [];
  for (let i = 0; i < 200; i++) {
    const due = performance.now();
    const tx = dev.store.tx("readonly").objectStore("rows");
    await Promise.all(ids.map((id) => new Promise((ok, fail) => { const r = tx.get(["todos", id]); r.onsuccess = ok; r.onerror = fail; })));
    idle.push(performance.now() - due);
    await new Promise((r) => setTimeout(r, 5));
  }
  const at = (list, p) => { list.sort((a, b) => a - b); return list[Math.min(list.length - 1, Math.floor(list.length * p))]; };
  const gaps = marks.slice(1).map((m, i) => m - marks[i]);
  return { seconds, received: todos.length + lists.length, reads: latencies.length, p50: at(latencies, 0.5), p99: at(latencies, 0.99), max: latencies[latencies.length - 1],
           idle50: at(idle, 0.5), idle99: at(idle, 0.99), late50: at(late, 0.5), late99: at(late, 0.99), lateMax: late[late.length - 1],
           slices: gaps.length + 1, slice50: at(gaps, 0.5), slice90: at(gaps, 0.9) };
})()`);
const requests = faults.urls.length;
print(`options: initialSyncWorker ${worker}${slice}${budget}`);
print(`initial sync of ${sync.received} rows (${rows / 100} lists, ${rows} todos) ${worker ? "in a Worker" : "on the main thread"}: ${sync.seconds.toFixed(2)} s, ${requests} requests, ${Math.round(sync.received / sync.seconds)} rows/s`);
print(`reads of 100 rows every 5 ms during it: ${sync.reads} reads, p50 ${sync.p50.toFixed(2)} ms, p99 ${sync.p99.toFixed(2)} ms, max ${sync.max.toFixed(2)} ms (the same reads after it, alone: p50 ${sync.idle50.toFixed(2)} ms, p99 ${sync.idle99.toFixed(2)} ms)`);
print(`the main thread meanwhile: a 5 ms timer late by p50 ${sync.late50.toFixed(2)} ms, p99 ${sync.late99.toFixed(2)} ms, max ${sync.lateMax.toFixed(2)} ms; ${sync.slices} slices applied (${Math.round(sync.received / sync.slices)} rows each on average), one every p50 ${sync.slice50.toFixed(1)} ms, p90 ${sync.slice90.toFixed(1)} ms`);
if (sync.received !== rows + rows / 100) throw new Error(`expected ${rows + rows / 100} rows, the store has ${sync.received}`);

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
faults.seen.length = 0;
faults.offline = true;
const written = await edits.eval(`(async () => {
  const start = performance.now();
  for (let edit = 0; edit < 10000; edit++) {
    await dev.store.write([{resource: "todos", id: ids[edit % ids.length], kind: "update", fields: {title: "edit " + edit}}]);
  }
  return (performance.now() - start) / 1000;
})()`);
faults.offline = false;
faults.seen.length = 0;
const upload = await edits.eval(`(async () => {
  // The time spent waiting on the server's answers (up to their headers), to tell it from the client's own.
  window.serverMs = 0;
  dev.engine.options.fetch = async (...args) => { const t = performance.now(); try { return await fetch(...args); } finally { serverMs += performance.now() - t; } };
  const start = performance.now();
  await dev.engine.sync();
  return { seconds: (performance.now() - start) / 1000, server: serverMs / 1000, left: (await dev.store.operations()).length };
})()`);
const writes = faults.seen.filter((s) => !s.startsWith("GET"));
const byMethod = {};
for (const s of writes) { const k = s.split(" ").slice(0, 2).join(" "); byMethod[k] = (byMethod[k] ?? 0) + 1; }
print(`10,000 offline edits across 1,000 todos written locally in ${written.toFixed(2)} s, uploaded in ${upload.seconds.toFixed(2)} s (${upload.server.toFixed(2)} s of it waiting on the server) with ${writes.length} write requests (${JSON.stringify(byMethod)}), ${upload.left} left in the outbox`);
if (upload.left !== 0) throw new Error("the outbox did not empty");

await browser.close();
server.close();
process.exit(0);

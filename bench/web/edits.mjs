// Where a local edit's time goes in FerryWeb (issue 50): headless Chromium, the store in
// the browser's default profile (on disk), no server. 1,000 todos as the feed would have
// left them (a revision each), each edited once already (its base kept: the steady state
// of bench.mjs's 10,000 edits across 1,000 todos); then, in rounds, each variant below
// makes FERRYWEB_EDITS_N edits (500) awaited one after another, and the figure is its
// median over the rounds (FERRYWEB_EDITS_ROUNDS, 3) of the time per edit. Variants
// alternate within a round so that each meets the same moments of a loaded machine.
//
//   (cd clients/web && tsc -p .) && node bench/web/edits.mjs
//   FERRYWEB_EDITS_BASELINE=<another build's dist> node bench/web/edits.mjs   # its store.write
//                             alternated with this build's, in the same page and store
import { Browser } from "../../clients/web/browser/cdp.mjs";
import { startHarness } from "../../clients/web/browser/harness.mjs";
import { readFileSync, cpSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";

const n = Number(process.env.FERRYWEB_EDITS_N ?? 500);
const rounds = Number(process.env.FERRYWEB_EDITS_ROUNDS ?? 3);
// No /v1 request is made: the proxy's server port is never used.
const baseline = process.env.FERRYWEB_EDITS_BASELINE;
// Served beside this build's: dist/baseline/src/index.js.
const served = fileURLToPath(new URL("../../clients/web/dist/baseline", import.meta.url));
if (baseline) cpSync(baseline, served, { recursive: true });
const { server, origin } = await startHarness(1);
const browser = await Browser.launch();
const page = await browser.pageIn(undefined, `${origin}/`);
await page.eval(`device("edits-profile")`);
const figures = await page.eval(`(async () => {
  const store = dev.store, db = store.db, n = ${n}, rounds = ${rounds};
  // The baseline's FerryStore on the same database (its own connection).
  const old = ${baseline ? `await (await import("/dist/baseline/src/index.js")).FerryStore.open("edits-profile")` : "null"};
  const ids = Array.from({ length: 1000 }, () => crypto.randomUUID());
  await store.transaction((tx) => { for (const id of ids) tx.objectStore("rows").put(store.record("todos", id, { id, list_id: "l", title: "t", rank: "U", revision: 1 })); });
  for (let i = 0; i < ids.length; i += 100) await store.writeMany(ids.slice(i, i + 100).map((id) => ({ resource: "todos", id, kind: "update", fields: { title: "first" } })));
  const done = (tx) => new Promise((ok, fail) => { tx.oncomplete = ok; tx.onerror = () => fail(tx.error); tx.onabort = () => fail(tx.error ?? new Error("abort")); });
  const row = (i) => store.record("todos", ids[i % 1000], { id: ids[i % 1000], list_id: "l", title: "e" + i, rank: "U", revision: 1 });
  const op = (i) => ({ opID: crypto.randomUUID(), resource: "todos", rowID: ids[i % 1000], kind: "update", fields: ["title"], group: null, sent: false, state: "pending", attempts: 0 });
  const all = ["rows", "outbox", "bases", "state"];
  // A put of the row and an add of its outbox entry, nothing read: a local edit's floor.
  const puts = (stores, options, commit) => (i) => {
    const tx = options ? db.transaction(stores, "readwrite", options) : db.transaction(stores, "readwrite");
    tx.objectStore("rows").put(row(i));
    tx.objectStore("outbox").add(op(i));
    if (commit) tx.commit();
    return done(tx);
  };
  // The requests of FerryStore.write before this change: the counter, the row, its base
  // and its outbox entries read at once; then the puts; committed when idle (or at once).
  const readThenPut = (commit) => (i) => {
    const tx = db.transaction(all, "readwrite"), key = ["todos", ids[i % 1000]];
    const rows = tx.objectStore("rows"), state = tx.objectStore("state");
    const reads = [state.get("seq"), rows.get(key), tx.objectStore("bases").get(key), tx.objectStore("outbox").index("row").getAll(key)];
    reads[3].onsuccess = () => {
      state.put((reads[0].result ?? 0) + 1, "seq");
      rows.put(row(i));
      tx.objectStore("outbox").add(op(i));
      if (commit) tx.commit();
    };
    return done(tx);
  };
  const channel = new BroadcastChannel("edits-profile-post"), commit = { type: "commit", commit: { seq: 1, rows: JSON.stringify([{ resource: "todos", id: ids[0] }]) } };
  const variants = {
    "store.write (this build)": (i) => store.write([{ resource: "todos", id: ids[i % 1000], kind: "update", fields: { title: "e" + i } }]),
    ...(old ? { "store.write (the baseline's)": (i) => old.write([{ resource: "todos", id: ids[i % 1000], kind: "update", fields: { title: "e" + i } }]) } : {}),
    "store.writeMany of 100 edits, per edit": (i) => i % 100 === 0 ? store.writeMany(Array.from({ length: 100 }, (_, j) => ({ resource: "todos", id: ids[(i + j) % 1000], kind: "update", fields: { title: "e" + (i + j) } }))) : null,
    "reads (counter, row, base, outbox), then puts; committed when idle": readThenPut(false),
    "the same, tx.commit() after the puts": readThenPut(true),
    "puts alone, 4 stores, durability default": puts(all),
    "puts alone, 4 stores, relaxed": puts(all, { durability: "relaxed" }),
    "puts alone, 4 stores, strict": puts(all, { durability: "strict" }),
    "puts alone, 2 stores (rows, outbox)": puts(["rows", "outbox"]),
    "puts alone, 2 stores, tx.commit()": puts(["rows", "outbox"], undefined, true),
    "one get in a read-only transaction": (i) => { const r = db.transaction("rows", "readonly").objectStore("rows").get(["todos", ids[i % 1000]]); return new Promise((ok) => { r.onsuccess = ok; }); },
    "a commit posted on a BroadcastChannel (the sender's part)": () => { channel.postMessage(commit); },
  };
  const times = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, edit] of Object.entries(variants)) {
      const start = performance.now();
      for (let i = 0; i < n; i++) await edit(i);
      times[name].push((performance.now() - start) / n);
      // The outbox back to one entry a todo (its first edit's), as before the variant.
      await store.transaction(async (tx) => {
        const outbox = tx.objectStore("outbox");
        const ops = await new Promise((ok) => { const q = outbox.getAll(); q.onsuccess = () => ok(q.result); });
        const first = new Set();
        for (const o of ops) { if (first.has(o.rowID)) outbox.delete(o.sequence); else first.add(o.rowID); }
      });
    }
  }
  channel.close();
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return Object.entries(times).map(([name, xs]) => name + ": " + median(xs).toFixed(3) + " ms an edit (rounds " + xs.map((x) => x.toFixed(3)).join(", ") + ")");
})()`);
console.log(`ferryweb-edits: ${n} edits a variant, ${rounds} rounds, load average ${readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ")}`);
for (const line of figures) console.log(`ferryweb-edits: ${line}`);
await browser.close();
server.close();
if (baseline) rmSync(served, { recursive: true, force: true });
process.exit(0);

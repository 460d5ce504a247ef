// FerryWeb's seeded simulation, in the style of FerryKit's (Tests/FerryKitTests/Simulation):
// a few devices of one user, each its own IndexedDB store and engine, edit one list's
// ranked todos at random, sync at random through a network that drops requests and loses
// answers (decided by the seed), and must then converge with each other and the server.
// Runs in the page; browser/run.mjs calls it for each seed.
import { FerryStore, SyncEngine, Rank } from "/dist/src/index.js";

/** A small seeded generator (mulberry32): the same seed draws the same steps and faults. */
function generator(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { next, below: (n) => Math.floor(next() * n), chance: (p) => next() < p };
}

/**
 * A key for a row placed at `at` in `list`. Two devices that inserted at the same spot
 * offline made the same key (legal: ties sort by id), and nothing fits between equal
 * keys: the upper bound is then the first key above the lower one.
 */
function rankAt(list, at) {
  const a = list[at - 1]?.rank ?? null;
  const b = list.slice(at).find((x) => a === null || x.rank > a)?.rank ?? null;
  return Rank.between(a, b);
}

const byRank = (x, y) => Rank.compare(x.rank, y.rank) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);

export async function simulate(seed, token, { devices = 3, steps = 40 } = {}) {
  const rng = generator(seed);
  const faults = { on: true, dropped: 0, lost: 0 };
  // The network: a request may never leave, or reach the server and lose its answer.
  const wire = [];
  const network = async (input, init) => {
    const method = (init?.method ?? "GET").toUpperCase();
    const note = (what) => { if (method !== "GET") wire.push(`${method} ${input} ${init?.body ?? ""} ${init?.headers?.["Idempotency-Key"] ?? ""} -> ${what}`); };
    if (faults.on && rng.chance(0.15)) { faults.dropped++; note("dropped"); throw new TypeError("dropped"); }
    const answer = await fetch(input, init);
    if (faults.on && method !== "GET" && rng.chance(0.15)) { faults.lost++; note(`lost ${answer.status} ${await answer.clone().text()}`); await answer.arrayBuffer(); throw new TypeError("answer lost"); }
    note(`${answer.status} ${(await answer.clone().text()).slice(0, 200)}`);
    return answer;
  };
  const fleet = [];
  const log = [];
  const current = { step: -1 };
  for (let d = 0; d < devices; d++) {
    const store = await FerryStore.open(`sim-${seed}-${d}-${Date.now()}`);
    const engine = new SyncEngine(store, { baseURL: location.origin, token: async () => token, fetch: network });
    engine.on((e) => { if (e.type !== "changed") log.push(`${current.step} d${d} ${JSON.stringify(e).slice(0, 160)}`); });
    fleet.push({ store, engine });
  }
  const sync = (dev) => dev.engine.sync().catch(() => {});
  const [listID] = await fleet[0].store.write([{ resource: "lists", kind: "create", fields: { title: `sim ${seed}` } }]);
  const todos = async (dev) => (await dev.store.all("todos")).filter((t) => t.list_id === listID).sort(byRank);

  for (let step = 0; step < steps; step++) {
    const dev = fleet[rng.below(fleet.length)];
    const who = fleet.indexOf(dev);
    current.step = step;
    const list = await todos(dev);
    const roll = rng.below(100);
    if (roll < 30 || list.length === 0) {
      if (!(await dev.store.get("lists", listID))) { await sync(dev); continue; }
      const at = rng.below(list.length + 1);
      const rank = rankAt(list, at);
      await dev.store.write([{ resource: "todos", kind: "create", fields: { list_id: listID, title: `t${seed}.${step}`, rank } }]);
    } else if (roll < 45) {
      const t = list[rng.below(list.length)];
      await dev.store.write([{ resource: "todos", id: t.id, kind: "update", fields: { title: `e${step}` } }]);
    } else if (roll < 55) {
      const t = list[rng.below(list.length)];
      await dev.store.write([{ resource: "todos", id: t.id, kind: "update", fields: { done: !t.done } }]);
    } else if (roll < 65) {
      const t = list[rng.below(list.length)];
      const rest = list.filter((x) => x.id !== t.id);
      const at = rng.below(rest.length + 1);
      const rank = rankAt(rest, at);
      await dev.store.write([{ resource: "todos", id: t.id, kind: "update", fields: { rank } }]);
    } else if (roll < 72) {
      const t = list[rng.below(list.length)];
      await dev.store.write([{ resource: "todos", id: t.id, kind: "delete" }]);
      log.push(`${step} d${who} delete ${t.id}`);
    } else {
      await sync(dev);
    }
  }

  // The network heals: every device syncs until all outboxes are empty and all agree.
  faults.on = false;
  const view = async (dev) => JSON.stringify((await todos(dev)).map((t) => [t.id, t.title, t.done, t.rank, t.revision]));
  for (let round = 0; round < 40; round++) {
    for (const dev of fleet) await sync(dev);
    const waiting = (await Promise.all(fleet.map((d) => d.store.operations()))).flat().filter((o) => o.state !== "rejected");
    const views = await Promise.all(fleet.map(view));
    if (waiting.length === 0 && views.every((v) => v === views[0])) {
      const server = await fetch(`/v1/todos?list_id=${listID}&limit=1000&order=rank`, { headers: { Authorization: `Bearer ${token}` } });
      const rows = (await server.json()).data.sort(byRank);
      const serverView = JSON.stringify(rows.map((t) => [t.id, t.title, t.done, t.rank, t.revision]));
      const rejected = (await Promise.all(fleet.map((d) => d.store.operations()))).flat().filter((o) => o.state === "rejected");
      for (const dev of fleet) dev.store.close();
      return { converged: serverView === views[0], rows: rows.length, rounds: round + 1, dropped: faults.dropped, lost: faults.lost,
               rejected: rejected.map((o) => o.lastError?.code ?? "?"), device: views[0].slice(0, 300), server: serverView.slice(0, 300) };
    }
  }
  const stuck = (await Promise.all(fleet.map((d) => d.store.operations()))).flat().filter((o) => o.state !== "rejected")
    .map((o) => `${o.kind} ${o.resource} ${o.state} sent=${o.sent} err=${JSON.stringify(o.lastError ?? null)}`);
  // Which rows differ, and what each device and the server know of them.
  const perDevice = await Promise.all(fleet.map(async (d) => new Map((await todos(d)).map((t) => [t.id, t]))));
  const ids = new Set(perDevice.flatMap((m) => [...m.keys()]));
  const differ = [];
  for (const id of ids) {
    const versions = perDevice.map((m) => JSON.stringify(m.get(id) ? [m.get(id).title, m.get(id).done, m.get(id).rank, m.get(id).revision] : null));
    if (versions.every((v) => v === versions[0])) continue;
    const server = await (await fetch(`/v1/todos/${id}`, { headers: { Authorization: `Bearer ${token}` } })).text();
    const ops = await Promise.all(fleet.map(async (d) => (await d.store.operations()).filter((o) => o.rowID === id).map((o) => `${o.kind}:${o.state}:${o.lastError?.code ?? ""}`)));
    differ.push({ id, versions, server: server.slice(0, 200), ops, log: log.filter((l) => l.includes(id) && !l.includes("conflict")), wire: wire.filter((l) => l.includes(id)) });
  }
  return { converged: false, reason: "devices never agreed", differ, stuck, views: (await Promise.all(fleet.map(view))).map((v) => v.slice(0, 300)) };
}

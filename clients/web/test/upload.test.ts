// The upload of writes that name a resource or a field the server lacks, on an
// in-memory stand-in for the store's IndexedDB: each is rejected (kept in the outbox,
// reviewable, with a `rejected` event naming it and the row as written), never deleted
// as a cancelled operation (the trial's `study_set` create: outbox 1 to 0, no event).
import { test } from "node:test";
import assert from "node:assert/strict";
import { SyncEngine, SyncEvent } from "../src/engine.js";
import { FerryStore, StoredOperation } from "../src/store.js";
import { RowData } from "../src/json.js";

/** An IDBRequest's little the engine reads: its result, told through `onsuccess`. */
function request<T>(result: T): IDBRequest<T> {
  const r = { result, onsuccess: null as null | (() => void), onerror: null };
  setTimeout(() => r.onsuccess?.());
  return r as unknown as IDBRequest<T>;
}

/** The store's four object stores in memory, keyed as FerryStore's (rows and bases by [resource, id]). */
function memoryStore(rows: { resource: string; id: string; data: RowData }[] = [], bases: { resource: string; id: string; revision: number; row: RowData }[] = []) {
  const data: Record<string, Map<string, any>> = { rows: new Map(), outbox: new Map(), bases: new Map(), state: new Map() };
  const key = (k: unknown) => JSON.stringify(k);
  const keyOf = (name: string, value: any, given?: unknown) =>
    name === "state" ? key(given) : name === "outbox" ? key(value.sequence) : key([value.resource, value.id]);
  const objectStore = (name: string) => ({
    get: (k: unknown) => request(data[name].get(key(k))),
    put: (value: any, given?: unknown) => { data[name].set(keyOf(name, value, given), structuredClone(value)); return request(undefined); },
    delete: (k: unknown) => { data[name].delete(key(k)); return request(undefined); },
    index: (index: string) => ({
      getAll: (k: any) => request([...data[name].values()].filter((v) =>
        index === "row" ? v.resource === k[0] && v.rowID === k[1] : v.resource === k)),
    }),
  });
  const tx = { objectStore } as unknown as IDBTransaction;
  let sequence = 0;
  for (const row of rows) data.rows.set(key([row.resource, row.id]), row);
  for (const base of bases) data.bases.set(key([base.resource, base.id]), base);
  const store = {
    name: "test", schema: null,
    listen: () => () => {}, broadcast: () => {}, noteRow: () => {},
    tx: () => tx,
    transaction: async (body: (t: IDBTransaction) => unknown) => body(tx),
    operations: async () => [...data.outbox.values()] as StoredOperation[],
    state: async (k: string) => data.state.get(key(k)),
    setState: async (k: string, v: unknown) => { data.state.set(key(k), v); },
    record: (resource: string, id: string, d: RowData) => ({ resource, id, data: d }),
    add(op: Omit<StoredOperation, "sequence" | "state" | "attempts" | "sent">) {
      const stored = { ...op, sequence: ++sequence, state: "pending", attempts: 0, sent: false };
      data.outbox.set(key(stored.sequence), stored);
    },
    row: (resource: string, id: string) => data.rows.get(key([resource, id]))?.data,
  };
  return store;
}

const schema = {
  resources: [{ name: "study_sets", columns: [
    { name: "id", writable: true }, { name: "title", writable: true }, { name: "description", writable: true },
    { name: "revision", writable: false }, { name: "last_modified", writable: false },
  ] }],
};

function engineOn(store: ReturnType<typeof memoryStore>) {
  const asked: string[] = [];
  const engine = new SyncEngine(store as unknown as FerryStore, {
    baseURL: "http://h", token: async () => "t", initialSyncByIndex: false,
    fetch: (async (url: string, init: RequestInit) => {
      asked.push(`${init.method} ${url}`);
      return new Response(JSON.stringify(schema), { status: 200, headers: { "Content-Type": "application/json" } });
    }) as typeof fetch,
  });
  const events: SyncEvent[] = [];
  engine.on((e) => events.push(e));
  return { engine, events, asked };
}

test("a create of a resource the server lacks stays in the outbox, rejected (404, naming it), with a rejected event and the row as written", async () => {
  const store = memoryStore([{ resource: "study_set", id: "s1", data: { id: "s1", title: "typo" } }]);
  store.add({ opID: "op1", resource: "study_set", rowID: "s1", kind: "create", fields: ["title"], group: null });
  const { engine, events, asked } = engineOn(store);
  await engine.upload();
  const rejected = await engine.rejected();
  assert.equal(rejected.length, 1, "kept, not deleted");
  const problem = rejected[0].lastError as { status: number; code: string; detail: string; localVersion: RowData };
  assert.deepEqual([problem.status, problem.code, problem.localVersion], [404, "unknown_resource", { id: "s1", title: "typo" }]);
  assert.ok(problem.detail.includes('"study_set"') && problem.detail.includes("study_sets"), problem.detail);
  const said = events.filter((e) => e.type === "rejected");
  assert.deepEqual(said.map((e) => e.type === "rejected" && [e.resource, e.id, e.status]), [["study_set", "s1", 404]]);
  assert.equal(store.row("study_set", "s1"), undefined, "the row rolls back as a refused create's does");
  // GET /v1 read again before refusing (it may predate a migration); no write sent.
  assert.deepEqual(asked, ["GET http://h/v1", "GET http://h/v1"]);
});

test("an update of a misspelled field is rejected (422 unknown_field naming it), the row back at its base, the edit kept in the problem", async () => {
  const server = { id: "s1", title: "t", revision: 3 };
  const store = memoryStore([{ resource: "study_sets", id: "s1", data: { ...server, titel: "renamed" } }],
                            [{ resource: "study_sets", id: "s1", revision: 3, row: server }]);
  store.add({ opID: "op1", resource: "study_sets", rowID: "s1", kind: "update", fields: ["titel"], group: null });
  const { engine, events, asked } = engineOn(store);
  await engine.upload();
  const rejected = await engine.rejected();
  const problem = rejected[0]?.lastError as { status: number; code: string; field: string; localVersion: RowData };
  assert.deepEqual([problem.status, problem.code, problem.field], [422, "unknown_field", "titel"]);
  assert.equal(problem.localVersion.titel, "renamed");
  assert.deepEqual(store.row("study_sets", "s1"), server);
  assert.equal(events.filter((e) => e.type === "rejected").length, 1);
  assert.ok(asked.every((a) => a.startsWith("GET ")), "nothing sent");
});

test("read-only columns the server sets are columns: not refused (the planner leaves them out of the body, as before)", async () => {
  const store = memoryStore([{ resource: "study_sets", id: "s1", data: { id: "s1", title: "t", revision: 7 } }]);
  store.add({ opID: "op1", resource: "study_sets", rowID: "s1", kind: "create", fields: ["title", "revision"], group: null });
  const { engine, events, asked } = engineOn(store);
  // The fake answers every request with GET /v1's document: the create's answer is not a
  // row, so the engine retries later; what matters is that it was sent, not refused.
  await engine.upload();
  assert.deepEqual(await engine.rejected(), []);
  assert.equal(events.filter((e) => e.type === "rejected").length, 0);
  assert.ok(asked.includes("POST http://h/v1/study_sets"), asked.join(", "));
});

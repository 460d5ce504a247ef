// A write that names a resource or a field the server lacks is refused, never dropped:
// the planner leaves such an operation out of its plan, and the engine deleted what the
// plan left out as cancelled (a create of "study_set" vanished from the outbox, with no
// event). Up front when the schema is known (`checkEdits`), else at upload (`refusals`).
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeProblem, checkEdits, refusals, WriteRefused } from "../src/schemacheck.js";
import { plan, PendingOperation, SchemaResource, rowKeyOf } from "../src/planner.js";

const column = (name: string, writable = true) => ({ name, writable });
const schema: SchemaResource[] = [
  { name: "study_sets", columns: [column("id"), column("title"), column("description"), column("revision", false), column("last_modified", false)] },
  { name: "terms", columns: [column("id"), { name: "set_id", writable: true, references: "study_sets" }, column("front")] },
];
let sequence = 0;
const op = (resource: string, rowID: string, kind: PendingOperation["kind"], fields: string[], more: Partial<PendingOperation> = {}): PendingOperation =>
  ({ opID: `op${++sequence}`, sequence, resource, rowID, kind, fields, ...more });

test("a resource the server lacks is a 404 naming it and the resources there are", () => {
  const problem = writeProblem(schema, "study_set", ["title"]);
  assert.equal(problem?.status, 404);
  assert.equal(problem?.code, "unknown_resource");
  assert.equal(problem?.resource, "study_set");
  assert.ok(problem?.detail.includes('"study_set"') && problem.detail.includes("study_sets, terms"), problem?.detail);
});

test("a field that is no column is a 422 unknown_field naming every such field; read-only columns and id are columns", () => {
  const problem = writeProblem(schema, "study_sets", ["title", "descripton", "titel"]);
  assert.equal(problem?.status, 422);
  assert.equal(problem?.code, "unknown_field");
  assert.equal(problem?.field, "descripton");
  assert.deepEqual(problem?.fields, ["descripton", "titel"]);
  assert.ok(problem?.detail.includes('"descripton"') && problem.detail.includes("description"), problem?.detail);
  assert.equal(writeProblem(schema, "study_sets", ["id", "title", "revision", "last_modified"]), null);
});

test("store.write's check throws WriteRefused naming the resource or the field; a good edit passes", () => {
  assert.throws(() => checkEdits(schema, [{ resource: "study_set", fields: { title: "typo" } }]),
    (e: unknown) => e instanceof WriteRefused && e instanceof TypeError && e.message.includes('"study_set"') && e.problem.code === "unknown_resource");
  assert.throws(() => checkEdits(schema, [{ resource: "study_sets", fields: { title: "t" } }, { resource: "study_sets", fields: { titel: "r" } }]),
    (e: unknown) => e instanceof WriteRefused && e.message.includes('"titel"'));
  checkEdits(schema, [{ resource: "study_sets", fields: { title: "t", revision: 3 } }, { resource: "terms" }]);
});

test("what the planner leaves out for its resource is refused at upload, not taken for cancelled", () => {
  const ops = [op("study_set", "s1", "create", ["title"]), op("study_sets", "s2", "create", ["title"])];
  const rows = new Map([[rowKeyOf("study_set", "s1"), { id: "s1", title: "typo" }], [rowKeyOf("study_sets", "s2"), { id: "s2", title: "ok" }]]);
  assert.deepEqual(plan(ops, schema, rows, new Map()).map((r) => r.rowID), ["s2"], "the planner skips it (FerryKit's)");
  const refused = refusals(ops, schema);
  assert.equal(refused.length, 1);
  assert.deepEqual([refused[0].resource, refused[0].rowID, refused[0].opIDs, refused[0].created], ["study_set", "s1", [ops[0].opID], true]);
  assert.equal(refused[0].problem.status, 404);
});

test("a misspelled field refuses every waiting operation of its row (one request, refused whole); other rows go on", () => {
  const ops = [
    op("study_sets", "s1", "update", ["title"], { sent: true }),
    op("study_sets", "s2", "update", ["title"]),
    op("study_sets", "s1", "update", ["titel"]),
  ];
  const refused = refusals(ops, schema);
  assert.deepEqual(refused.map((r) => [r.rowID, r.opIDs, r.created, r.problem.field]), [["s1", [ops[0].opID, ops[2].opID], false, "titel"]]);
});

test("a create deleted before it was sent needs no request: cancelled as before, not refused; once sent, refused", () => {
  assert.deepEqual(refusals([op("study_set", "s1", "create", ["title"]), op("study_set", "s1", "delete", [])], schema), []);
  assert.equal(refusals([op("study_set", "s1", "create", ["title"], { sent: true }), op("study_set", "s1", "delete", [])], schema).length, 1);
  assert.equal(refusals([op("study_set", "s1", "delete", [])], schema).length, 1, "a delete of a row the server has no resource for");
});

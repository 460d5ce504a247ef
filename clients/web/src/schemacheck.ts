// What a write may name: the resources `GET /v1` lists and their columns. A write that
// names another (a typo: "study_set" for "study_sets", "descripton") is refused, never
// dropped. The planner sends only writable columns and skips a resource the schema
// lacks, so such an edit used to vanish from the outbox with no event (the operation
// left out of the plan was taken for a cancelled one). Refused up front by
// `store.write` once the tab's engine has read the schema (FerryKit's `unknownResource`,
// `unknownColumn`); else at upload, as a rejection the app reviews (`engine.rejected()`),
// with the status the server would give: 404 for a resource it has not, 422
// `unknown_field` for a member that is no column. Read-only columns (`revision`,
// `last_modified`) are columns: the planner leaves them out of the body, as before.

import { PendingOperation, SchemaResource, rowKeyOf } from "./planner.js";
import { RowData } from "./json.js";

/** A write the schema refuses, as a problem+json the server would have answered. */
export interface WriteProblem {
  type: "about:blank";
  title: string;
  status: 404 | 422;
  code: "unknown_resource" | "unknown_field";
  detail: string;
  resource: string;
  /** The first unknown field (null: the resource is unknown). */
  field: string | null;
  /** Every unknown field. */
  fields: string[];
  /** The row as the app had written it, before the rollback (set by the engine at upload). */
  localVersion?: RowData | null;
}

/** The problem with writing `fields` (names) to `resource`, or null when the schema has both. */
export function writeProblem(schema: SchemaResource[], resource: string, fields: Iterable<string>): WriteProblem | null {
  const found = schema.find((r) => r.name === resource);
  if (!found) {
    const known = schema.map((r) => r.name).sort().join(", ");
    return {
      type: "about:blank", title: "Not Found", status: 404, code: "unknown_resource",
      detail: `the server has no resource "${resource}"; its resources are ${known || "none"}`,
      resource, field: null, fields: [],
    };
  }
  const columns = new Set(found.columns.map((c) => c.name));
  const unknown = [...new Set(fields)].filter((f) => f !== "id" && !columns.has(f));
  if (unknown.length === 0) return null;
  const named = unknown.map((f) => `"${f}"`).join(", ");
  return {
    type: "about:blank", title: "Unprocessable Content", status: 422, code: "unknown_field",
    detail: `${resource} has no column${unknown.length > 1 ? "s" : ""} ${named}; its columns are ${[...columns].join(", ")}`,
    resource, field: unknown[0], fields: unknown,
  };
}

/** An edit the schema refuses, thrown by `store.write` before anything is stored. */
export class WriteRefused extends TypeError {
  constructor(readonly problem: WriteProblem) {
    super(problem.detail);
    this.name = "WriteRefused";
  }
}

/** Throws `WriteRefused` for the first edit that names a resource or a field the schema lacks. */
export function checkEdits(schema: SchemaResource[], edits: { resource: string; fields?: RowData }[]): void {
  for (const edit of edits) {
    const problem = writeProblem(schema, edit.resource, Object.keys(edit.fields ?? {}));
    if (problem) throw new WriteRefused(problem);
  }
}

/** A row whose waiting operations the schema refuses: all of them are rejected together, as the server would refuse their one request. */
export interface Refusal {
  resource: string;
  rowID: string;
  opIDs: string[];
  /** The row's first operation is a create: the rows made under it go too (424 `parent_rejected`). */
  created: boolean;
  problem: WriteProblem;
}

/**
 * The rows of `operations` (those not rejected yet) that name a resource or a field the
 * schema lacks, in the order of their first operation. A create deleted before it was
 * ever sent needs no request (it is cancelled, as before) and is not refused.
 */
export function refusals(operations: PendingOperation[], schema: SchemaResource[]): Refusal[] {
  const byRow = new Map<string, PendingOperation[]>();
  for (const op of [...operations].sort((a, b) => a.sequence - b.sequence)) {
    const key = rowKeyOf(op.resource, op.rowID);
    const list = byRow.get(key);
    if (list) list.push(op);
    else byRow.set(key, [op]);
  }
  const out: Refusal[] = [];
  for (const ops of byRow.values()) {
    const first = ops[0];
    const created = first.kind === "create";
    if (created && !first.sent && ops.some((o) => o.kind === "delete")) continue;
    const problem = writeProblem(schema, first.resource, ops.flatMap((o) => o.fields));
    if (problem) out.push({ resource: first.resource, rowID: first.rowID, opIDs: ops.map((o) => o.opID), created, problem });
  }
  return out;
}

// From pending operations to the requests that upload them: FerryKit's UploadPlanner
// (Sources/FerryKit/Outbox), pure so coalescing and ordering are tested under Node.
// clients/conformance/outbox.json holds its plans, keys and state machine.
//
// Per row, in write order:
// - a create and later updates send one POST with the row as it is now;
// - a create followed by a delete sends nothing, unless the create was sent before
//   without a settling answer: then one DELETE with `If-Match: *`;
// - updates send one PATCH of the union of the changed fields (the dirty mask), on the
//   base revision;
// - a delete sends one DELETE on the base revision.
// Creates go parents first and deletes children first, by the references of `GET /v1`.

import { RowData } from "./json.js";

export type OperationKind = "create" | "update" | "delete";

/** One local write the server has not acknowledged yet. */
export interface PendingOperation {
  /** Unique per operation: the Idempotency-Key of a request that carries it alone. */
  opID: string;
  /** Order of the writes in this store. */
  sequence: number;
  resource: string;
  rowID: string;
  kind: OperationKind;
  /** The fields this write changed (the per-field dirty mask). */
  fields: string[];
  /** The transaction it was made in: its writes go in one /v1/batch. */
  group?: string | null;
  /** Sent before without an answer that settled it: the server may have applied it. */
  sent?: boolean;
}

export interface SchemaColumn {
  name: string;
  writable: boolean;
  references?: string | null;
  [more: string]: unknown;
}

export interface SchemaResource {
  name: string;
  columns: SchemaColumn[];
  [more: string]: unknown;
}

export interface UploadRequest {
  action: OperationKind;
  resource: string;
  rowID: string;
  body: RowData | null;
  baseRevision: number | null;
  opIDs: string[];
  lastSequence: number;
  groups: string[];
  idempotencyKey: string;
}

const rowKey = (resource: string, id: string) => `${resource}\u0000${id}`;

/** Each resource's depth in the reference graph (0: references none). */
export function depths(schema: SchemaResource[]): Map<string, number> {
  const depth = new Map<string, number>();
  for (const r of schema) depth.set(r.name, 0);
  for (let round = 0; round < schema.length; round++) {
    let changed = false;
    for (const r of schema) {
      const parents = new Set(r.columns.map((c) => c.references).filter((p): p is string => !!p && p !== r.name));
      const ds = [...parents].map((p) => depth.get(p)).filter((d): d is number => d !== undefined);
      const d = (ds.length ? Math.max(...ds) : -1) + 1;
      if (d > (depth.get(r.name) ?? 0)) {
        depth.set(r.name, d);
        changed = true;
      }
    }
    if (!changed) break;
  }
  return depth;
}

/**
 * The requests, in the order to send them. `rows` holds each row's current local state
 * (key `resource\0id`, see `rowKeyOf`), `bases` the revision each server-known row was
 * edited on.
 */
export function plan(
  operations: PendingOperation[], schema: SchemaResource[], rows: Map<string, RowData>, bases: Map<string, number>,
): UploadRequest[] {
  const byRow = new Map<string, PendingOperation[]>();
  const firstSeen = new Map<string, number>();
  for (const op of [...operations].sort((a, b) => a.sequence - b.sequence)) {
    const key = rowKey(op.resource, op.rowID);
    const list = byRow.get(key);
    if (list) list.push(op);
    else byRow.set(key, [op]);
    if (!firstSeen.has(key)) firstSeen.set(key, op.sequence);
  }
  const resources = new Map(schema.map((r) => [r.name, r]));
  const requests: (UploadRequest & { key: string })[] = [];
  for (const [key, ops] of byRow) {
    const first = ops[0];
    const resource = resources.get(first.resource);
    if (!resource) continue;
    const writable = new Set(resource.columns.filter((c) => c.writable).map((c) => c.name));
    const opIDs = ops.map((o) => o.opID);
    const lastSequence = Math.max(...ops.map((o) => o.sequence));
    const created = first.kind === "create";
    const deleted = ops.some((o) => o.kind === "delete");
    const groups = [...new Set(ops.map((o) => o.group).filter((g): g is string => !!g))].sort();
    const fields = () => {
      const all = new Set<string>();
      for (const o of ops) for (const f of o.fields) if (writable.has(f)) all.add(f);
      return all;
    };
    const request = (action: OperationKind, body: RowData | null, baseRevision: number | null) =>
      requests.push({
        key, action, resource: first.resource, rowID: first.rowID, body, baseRevision, opIDs, lastSequence, groups,
        idempotencyKey: idempotencyKey(opIDs),
      });
    const row = rows.get(key);
    if (created && deleted) {
      // The create may have reached the server with its answer lost: delete whatever
      // is there. A 404 then means it never arrived.
      if (first.sent) request("delete", null, null);
    } else if (created) {
      if (!row) continue;
      // Only what the app set: a column left out gets the server's default.
      const body: RowData = {};
      const set = fields();
      for (const f of Object.keys(row)) if (set.has(f)) body[f] = row[f];
      body["id"] = first.rowID;
      request("create", body, null);
    } else if (deleted) {
      request("delete", null, bases.get(key) ?? null);
    } else {
      if (!row) continue;
      const body: RowData = {};
      for (const f of fields()) body[f] = row[f] ?? null;
      request("update", body, bases.get(key) ?? null);
    }
  }
  const depth = depths(schema);
  const rank = (r: UploadRequest) => {
    const d = depth.get(r.resource) ?? 0;
    return r.action === "create" ? d : r.action === "update" ? 1000 : 2000 + (100 - d);
  };
  requests.sort((a, b) => rank(a) - rank(b) || (firstSeen.get(a.key) ?? 0) - (firstSeen.get(b.key) ?? 0));
  return requests.map(({ key: _key, ...r }) => r);
}

/** The key of a row in `plan`'s maps. */
export function rowKeyOf(resource: string, id: string): string {
  return rowKey(resource, id);
}

/**
 * The op id of a single operation, or a key derived from all of them: a retry of the
 * same request carries the same key, so the server replays its first answer.
 */
export function idempotencyKey(opIDs: string[]): string {
  if (opIDs.length === 1) return opIDs[0].toLowerCase();
  return "ops-" + digest(opIDs.map((id) => id.toLowerCase()).sort().join(","));
}

const mask = (1n << 64n) - 1n;
const prime = 0x100000001b3n;
const utf8 = new TextEncoder();

/** FerryKit's short stable digest: two 64-bit FNV-1a lanes over UTF-8, in hex. */
export function digest(text: string): string {
  let a = 0xcbf29ce484222325n, b = 0x84222325cbf29ce4n;
  for (const byte of utf8.encode(text)) {
    const x = BigInt(byte);
    a = ((a ^ x) * prime) & mask;
    b = (((b ^ x) * prime) + 0x9e3779b9n) & mask;
  }
  return a.toString(16) + b.toString(16);
}

/** Where an outbox operation stands. */
export type OutboxState = "pending" | "inflight" | "rejected";
export type OutboxEvent = "sent" | "deferred" | "returned" | "settled" | "cancelled" | "refused" | "reopened" | "cleared";
export type Transition = { leaves: true } | { becomes: OutboxState; countsAttempt: boolean } | null;

/** The outbox's state machine (FerryKit's OutboxState.transition); null: the event does not concern the state. */
export function transition(state: OutboxState, event: OutboxEvent): Transition {
  switch (`${state}:${event}`) {
    case "pending:sent": return { becomes: "inflight", countsAttempt: true };
    case "inflight:deferred": case "inflight:returned": case "inflight:reopened": return { becomes: "pending", countsAttempt: false };
    case "pending:settled": case "inflight:settled": case "pending:cancelled": case "rejected:cleared": return { leaves: true };
    case "pending:refused": case "inflight:refused": return { becomes: "rejected", countsAttempt: false };
    default: return null;
  }
}

/**
 * For each request (by index) in a write group of two or more requests, the number of
 * its batch: groups that share a row are one batch (FerryKit's UploadPlanner.writeGroups).
 */
export function writeGroups(requests: UploadRequest[]): Map<number, number> {
  const parent = new Map<string, string>();
  const find = (group: string): string => {
    let root = group;
    for (let next = parent.get(root); next !== undefined && next !== root; next = parent.get(root)) root = next;
    return root;
  };
  for (const request of requests) {
    const groups = [...request.groups].sort();
    if (groups.length === 0) continue;
    if (!parent.has(groups[0])) parent.set(groups[0], groups[0]);
    for (const group of groups.slice(1)) {
      if (!parent.has(group)) parent.set(group, group);
      parent.set(find(group), find(groups[0]));
    }
  }
  const members = new Map<string, number[]>();
  requests.forEach((request, index) => {
    if (request.groups.length === 0) return;
    const root = find([...request.groups].sort()[0]);
    const list = members.get(root);
    if (list) list.push(index);
    else members.set(root, [index]);
  });
  const batch = new Map<number, number>();
  [...members.values()].filter((m) => m.length > 1).sort((a, b) => a[0] - b[0]).forEach((indices, number) => {
    for (const index of indices) batch.set(index, number);
  });
  return batch;
}

/** The requests of one HTTP call (FerryKit's UploadBundle). */
export interface UploadBundle {
  requests: UploadRequest[];
  /** An app's write group: one `/v1/batch`. */
  batch: boolean;
  /** More than one request of one action and resource: Ferry's bulk call (`POST`, `PATCH` or `DELETE /v1/<r>` with an array). */
  bulk: boolean;
  /** The single request's key, or a digest of every operation: the same call planned again carries the same key. */
  idempotencyKey: string;
}

function makeBundle(requests: UploadRequest[], batch: boolean): UploadBundle {
  const bulk = !batch && requests.length > 1;
  const opIDs = requests.flatMap((r) => r.opIDs);
  const idempotencyKey = requests.length === 1 && !batch ? requests[0].idempotencyKey
    : (batch ? "batch-" : "ops-") + digest(opIDs.map((id) => id.toLowerCase()).sort().join(","));
  return { requests, batch, bulk, idempotencyKey };
}

/**
 * Groups planned requests (in their sending order) into calls (FerryKit's
 * UploadPlanner.bundle): requests of the same action on the same resource at the same
 * step of the order go together, up to `maxBulk` per call. Requests of rows in `solo`
 * (keys of `rowKeyOf`), and updates and deletes without a base revision (they need
 * `If-Match: *`, which a bulk item cannot carry), go alone. A write group goes as one
 * batch at the step of its first request. Every call of a step goes after the calls of
 * the steps before it, so parents still precede children.
 */
export function bundle(requests: UploadRequest[], schema: SchemaResource[], maxBulk = 100, solo: Set<string> = new Set()): UploadBundle[] {
  const depth = depths(schema);
  const batches = writeGroups(requests);
  const batched = new Set<number>();
  const rank = (r: UploadRequest) => {
    const d = depth.get(r.resource) ?? 0;
    return r.action === "create" ? d : r.action === "update" ? 1000 : 2000 + (100 - d);
  };
  let order: string[] = [];
  let grouped = new Map<string, UploadRequest[]>();
  const bundles: UploadBundle[] = [];
  const flush = () => {
    for (const step of order) {
      const items = grouped.get(step) ?? [];
      for (let start = 0; start < items.length; start += Math.max(1, maxBulk)) {
        bundles.push(makeBundle(items.slice(start, start + Math.max(1, maxBulk)), false));
      }
    }
    order = [];
    grouped = new Map();
  };
  let currentRank: number | null = null;
  requests.forEach((request, index) => {
    const r = rank(request);
    if (r !== currentRank) { flush(); currentRank = r; }
    const batch = batches.get(index);
    if (batch !== undefined) {
      if (!batched.has(batch)) {
        batched.add(batch);
        flush();
        bundles.push(makeBundle(requests.filter((_, i) => batches.get(i) === batch), true));
      }
      return;
    }
    if (solo.has(rowKey(request.resource, request.rowID)) || (request.action !== "create" && request.baseRevision === null)) {
      bundles.push(makeBundle([request], false));
      return;
    }
    const step = `${r}\u0000${request.resource}\u0000${request.action}`;
    const list = grouped.get(step);
    if (list) list.push(request);
    else { order.push(step); grouped.set(step, [request]); }
  });
  flush();
  return bundles;
}

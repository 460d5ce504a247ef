// The three-way merge and what one server row does to the local copy: FerryKit's
// ThreeWayMerge and RemoteDecision (Sources/FerryKit/Merge), decided from values alone
// so they are tested under Node; the IndexedDB store gathers the facts and carries the
// decision out. clients/conformance/merge.json and feed.json hold the decisions.

import { intOf, jsonEqual, JSONValue, RowData } from "./json.js";

/** One field both sides changed. A missing value is one that side does not have. */
export interface Conflict {
  field: string;
  base?: JSONValue;
  local?: JSONValue;
  remote?: JSONValue;
}

/** Decides one conflict; `undefined` drops the field. The default keeps the local value. */
export type Resolver = (conflict: Conflict) => JSONValue | undefined;

function valueOf(row: RowData | null | undefined, field: string): JSONValue | undefined {
  return row && Object.prototype.hasOwnProperty.call(row, field) ? row[field] : undefined;
}

/**
 * Merges the server's newer `remote` into `local`, edited on `base`: a field only one
 * side changed takes that side's value; a dirty field both changed differently is a
 * conflict, the local value winning unless `resolve` says otherwise.
 */
export function threeWayMerge(
  base: RowData | null | undefined, local: RowData, remote: RowData, dirty: Iterable<string>, resolve?: Resolver,
): { row: RowData; conflicts: Conflict[] } {
  const merged: RowData = { ...remote };
  const conflicts: Conflict[] = [];
  const set = (field: string, value: JSONValue | undefined) => {
    if (value === undefined) delete merged[field];
    else merged[field] = value;
  };
  for (const field of new Set(dirty)) {
    const mine = valueOf(local, field), theirs = valueOf(remote, field), was = valueOf(base, field);
    if (jsonEqual(theirs, was) || jsonEqual(theirs, mine)) {
      set(field, mine);
    } else {
      const conflict: Conflict = { field };
      if (was !== undefined) conflict.base = was;
      if (mine !== undefined) conflict.local = mine;
      if (theirs !== undefined) conflict.remote = theirs;
      conflicts.push(conflict);
      set(field, resolve ? resolve(conflict) : mine);
    }
  }
  conflicts.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
  return { row: merged, conflicts };
}

/** What the store knows of a row; only the facts `needs` names are read. */
export interface LocalFacts {
  /** Operations of the row wait in the outbox (not rejected). */
  pending: boolean;
  /** The server version the local edits were made on. */
  base?: RowData | null;
  /** The row as the app sees it. */
  row?: RowData | null;
  /** Fields edited locally and not yet acknowledged. */
  dirty?: Iterable<string>;
}

export type Need = "base" | "row" | "dirty";

/** The problem pending operations are rejected with when their row goes. */
export interface RemovalProblem {
  code: "revoked" | "gone";
  detail: string;
}

export interface RemovedEvent {
  revoked: boolean;
  discardedEdits: boolean;
  localVersion: RowData | null;
}

export type Decision =
  | { decision: "ignore" }
  | { decision: "apply" }
  | { decision: "keep" }
  | { decision: "merge"; row: RowData }
  | { decision: "conflict"; row: RowData; conflicts: Conflict[] }
  | { decision: "remove"; revoked: boolean; problem: RemovalProblem | null; event: { removed: RemovedEvent } | null };

/** What to read before deciding on `remote`: a live row meeting no local edits needs nothing. */
export function needs(remote: RowData, pending: boolean): Need[] {
  if (remote["is_deleted"] === true) return remote["revoked"] === true ? ["row"] : ["base", "row"];
  if (intOf(remote["revision"]) === undefined || !pending) return [];
  return ["base", "row", "dirty"];
}

/**
 * The rule: older or equal revisions are ignored; a tombstone or a revocation removes
 * the row (its waiting operations are rejected, with an event carrying the local
 * version); a row without local edits is applied (if newer than the stored one); one
 * with local edits is merged field by field, the incoming row becoming the new base.
 */
export function decide(remote: RowData, local: LocalFacts, resolver?: Resolver): Decision {
  const baseRevision = local.base ? intOf(local.base["revision"]) : undefined;
  if (remote["is_deleted"] === true) {
    const revoked = remote["revoked"] === true;
    const revision = intOf(remote["revision"]);
    if (!revoked && baseRevision !== undefined && revision !== undefined && revision <= baseRevision) return { decision: "ignore" };
    const problem: RemovalProblem | null = local.pending
      ? revoked ? { code: "revoked", detail: "access to the row was lost" } : { code: "gone", detail: "the row was deleted" }
      : null;
    const existed = (local.row ?? null) !== null || local.pending;
    const event = existed
      ? { removed: { revoked, discardedEdits: local.pending, localVersion: local.pending ? local.row ?? null : null } }
      : null;
    return { decision: "remove", revoked, problem, event };
  }
  const revision = intOf(remote["revision"]);
  if (revision === undefined) return { decision: "ignore" };
  if (!local.pending) return { decision: "apply" };
  if (baseRevision !== undefined && baseRevision >= revision) return { decision: "ignore" };
  if (!local.row) return { decision: "keep" };
  const { row, conflicts } = threeWayMerge(local.base, local.row, remote, local.dirty ?? [], resolver);
  return conflicts.length === 0 ? { decision: "merge", row } : { decision: "conflict", row, conflicts };
}

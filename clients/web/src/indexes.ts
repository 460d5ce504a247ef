// Reading rows by a field (`FerryStore.query`): the app declares, per resource, the fields
// it reads rows by (`{ todos: ["list_id"] }`), and each stored row carries one key per
// declared field, `[resource, field, value]`, under one IndexedDB multi-entry index. A
// list's todos are then one request that returns exactly their rows, where without it the
// app reads every todo of the store (100,000 rows) and filters them.

import { RowData } from "./json.js";

/** Per resource, the fields rows are read by. */
export type Indexes = Record<string, string[]>;

/** A value a row is found by: IndexedDB keys, without dates and binaries (JSON has neither). */
export type IndexValue = string | number;

export type IndexKey = [string, string, IndexValue];

/** A declaration as given (any order, repeats) made canonical; a `TypeError` naming what is wrong. */
export function normalIndexes(given: unknown): Indexes {
  if (given === undefined || given === null) return {};
  if (typeof given !== "object" || Array.isArray(given)) throw new TypeError("indexes: an object of resource names to arrays of field names");
  const out: Indexes = {};
  for (const resource of Object.keys(given as object).sort()) {
    const fields = (given as Record<string, unknown>)[resource];
    if (!Array.isArray(fields) || fields.some((f) => typeof f !== "string" || f === "")) {
      throw new TypeError(`indexes.${resource}: an array of field names`);
    }
    if (fields.length) out[resource] = [...new Set(fields as string[])].sort();
  }
  return out;
}

/** Whether two canonical declarations are the same. */
export function sameIndexes(a: Indexes, b: Indexes): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** Whether `value` can be a row's key for `query`: a string, or a finite number. */
export function indexable(value: unknown): value is IndexValue {
  return typeof value === "string" || (typeof value === "number" && Number.isFinite(value));
}

/**
 * The keys a row of `resource` is found by: `[resource, field, value]` for each declared
 * field whose value is a string or a finite number (null, booleans, objects: none).
 */
export function indexKeys(indexes: Indexes, resource: string, data: RowData): IndexKey[] {
  const fields = indexes[resource];
  if (!fields) return [];
  const keys: IndexKey[] = [];
  for (const field of fields) {
    const value = data[field];
    if (indexable(value)) keys.push([resource, field, value]);
  }
  return keys;
}

// Rows as JSON: what FerryWeb stores, merges and sends.

export type JSONValue = null | boolean | number | string | JSONValue[] | { [key: string]: JSONValue };
/** A row's fields: column name to value. */
export type RowData = { [field: string]: JSONValue };

/** Deep equality of JSON values (objects by their members, whatever their key order). */
export function jsonEqual(a: JSONValue | undefined, b: JSONValue | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a === null || b === null) return false;
  if (typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ka = Object.keys(a), kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && jsonEqual(a[k], b[k]));
}

/** An integer value (FerryKit's `JSONValue.int`): a revision, a number id. */
export function intOf(v: JSONValue | undefined): number | undefined {
  return typeof v === "number" && Number.isInteger(v) ? v : undefined;
}

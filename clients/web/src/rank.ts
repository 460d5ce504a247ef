// FerryRank in TypeScript: fractional-index keys for rows kept in a user-defined order.
//
// A port of Sources/FerryRank, digit for digit: the keys must be identical to the Swift
// ones, or two clients inserting between the same neighbours would sort differently.
// clients/conformance/ranks.json holds vectors generated from the Swift FerryRank; both
// clients' tests check every one.
//
// Alphabet: `0-9A-Za-z` in ASCII order, each a base-62 digit, so bytewise comparison of
// keys (PostgreSQL's COLLATE "C", and JavaScript's `<` on these ASCII strings) orders
// them as the fractions they stand for. A key never ends in "0".

/** Why a rank was rejected or could not be generated; never echoes the key. */
export class RankError extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = "RankError";
  }
}

export const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
export const maxLength = 128;
export const maxSpreadCount = 100_000;
const base = 62;

type Bias = "lower" | "upper" | "middle";

function digitOf(code: number): number | undefined {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 65 && code <= 90) return code - 65 + 10;
  if (code >= 97 && code <= 122) return code - 97 + 36;
  return undefined;
}

const utf8 = new TextEncoder();

/** The key's base-62 digits, enforcing every rule of `validate`; counts UTF-8 bytes, as Swift does. */
function digits(key: string): number[] {
  const bytes = utf8.encode(key);
  if (bytes.length === 0) throw new RankError("rank must not be empty");
  if (bytes.length > maxLength) throw new RankError(`rank must be at most ${maxLength} characters long`);
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const d = digitOf(bytes[i]);
    if (d === undefined) throw new RankError(`rank may only contain 0-9, A-Z and a-z (bad character at byte ${i})`);
    out.push(d);
  }
  if (out[out.length - 1] === 0) throw new RankError('rank must not end in "0" (it would leave no room before it)');
  return out;
}

function keyFrom(ds: number[]): string {
  if (ds.length > maxLength) throw new RankError(`no rank of at most ${maxLength} characters fits between these neighbours`);
  return ds.map((d) => alphabet[d]).join("");
}

function pick(low: number, high: number, bias: Bias): number {
  switch (bias) {
    case "lower": return low + 1;
    case "upper": return high - 1;
    case "middle": return Math.floor((low + high) / 2);
  }
}

/** The shortest digit string strictly between `a` and `b` (null: below 1); see Rank+Generation.swift. */
function generate(a: number[], b: number[] | null, bias: Bias): number[] {
  const digitA = (i: number) => (i < a.length ? a[i] : 0);
  const out: number[] = [];
  let i = 0;
  if (b !== null) {
    while (digitA(i) === b[i]) {
      out.push(b[i]);
      i++;
    }
  }
  const low = digitA(i);
  const high = b !== null ? b[i] : base;
  if (high - low >= 2) {
    out.push(pick(low, high, bias));
    return out;
  }
  if (b !== null && b.length > i + 1) {
    out.push(high);
    return out;
  }
  out.push(low);
  i++;
  while (digitA(i) === base - 1) {
    out.push(base - 1);
    i++;
  }
  out.push(pick(digitA(i), base, bias));
  return out;
}

function lexLess(a: number[], b: number[]): boolean {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] < b[i];
  return a.length < b.length;
}

function bounds(a: string | null, b: string | null): [number[], number[] | null] {
  const lower = a !== null ? digits(a) : [];
  const upper = b !== null ? digits(b) : null;
  if (a !== null && upper !== null && !lexLess(lower, upper)) {
    throw new RankError("the lower rank must sort strictly before the upper rank");
  }
  return [lower, upper];
}

/** Throws a RankError when `key` is not a well-formed rank. */
export function validate(key: string): void {
  digits(key);
}

/**
 * A key strictly between `a` and `b` (null `a`: before everything; null `b`: after
 * everything). When one neighbour is longer it is taken to be the recently generated
 * one, and the key is placed next to it.
 */
export function between(a: string | null | undefined, b: string | null | undefined): string {
  const [lower, upper] = bounds(a ?? null, b ?? null);
  const l = lower.length, u = upper?.length ?? 0;
  const bias: Bias = l > u ? "lower" : l < u ? "upper" : "middle";
  return keyFrom(generate(lower, upper, bias));
}

/** A key before the current first key (null when the list is empty). */
export function first(before: string | null | undefined): string {
  return between(null, before ?? null);
}

/** A key after the current last key (null when the list is empty). */
export function last(after: string | null | undefined): string {
  return between(after ?? null, null);
}

/** `n` increasing keys spread evenly between `a` and `b`, for bulk inserts. */
export function spread(n: number, a: string | null | undefined, b: string | null | undefined): string[] {
  if (!Number.isInteger(n) || n < 0 || n > maxSpreadCount) {
    throw new RankError(`spread count must be between 0 and ${maxSpreadCount}, got ${n}`);
  }
  const [lower, upper] = bounds(a ?? null, b ?? null);
  const out: number[][] = [];
  const fill = (count: number, lo: number[], hi: number[] | null): void => {
    if (count <= 0) return;
    const mid = generate(lo, hi, "middle");
    const left = Math.floor((count - 1) / 2);
    fill(left, lo, mid);
    out.push(mid);
    fill(count - 1 - left, mid, hi);
  };
  fill(n, lower, upper);
  return out.map(keyFrom);
}

/** Bytewise order of two keys, as PostgreSQL's COLLATE "C" compares them. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

// The retry table: what to do after one attempt to send an upload. The same table as
// FerryKit's (Sources/FerryKit/Retry/RetryPolicy.swift); clients/conformance/retry.json
// holds its decisions, checked by both clients.
//
// | answer | step |
// |---|---|
// | network error, timeout, 5xx, 429 | back off: random in [0, min(cap, base * 2^attempt)]; Retry-After wins |
// | 401 | a new token from the token provider, then retry once; a second 401 in a row pauses sync |
// | 409 idempotency_key_in_use | the same request still runs on the server: wait as for a 503, same key |
// | 409, 412 | merge with the server's current, then send again |
// | 410 on a row | apply the tombstone; pending edits of the row are rejected |
// | other 4xx | the operation is rejected with its problem; the rest goes on (its dependants wait on it) |
// | 2xx (replayed or not) | success |

/** No answer at all, or an HTTP status with its Retry-After (seconds) and problem code. */
export type Outcome =
  | { transportFailure: true }
  | { status: number; retryAfter?: number | null; code?: string | null };

export type Step =
  | { step: "success" }
  | { step: "retry"; after: number }
  | { step: "refreshToken" }
  | { step: "pause" }
  | { step: "merge" }
  | { step: "tombstone" }
  | { step: "reject" };

export class RetryPolicy {
  constructor(readonly base = 0.5, readonly cap = 60) {}

  /** The step after `outcome` on attempt `attempt` (0 first); `random` draws from [0, 1). */
  step(outcome: Outcome, attempt: number, previousWasUnauthorized = false, random: () => number = Math.random): Step {
    if ("transportFailure" in outcome) return { step: "retry", after: this.backoff(attempt, random) };
    const { status } = outcome;
    const retryAfter = outcome.retryAfter ?? null;
    const waitOrBackoff = (): Step =>
      retryAfter !== null && retryAfter >= 0
        ? { step: "retry", after: Math.min(retryAfter, this.cap * 10) }
        : { step: "retry", after: this.backoff(attempt, random) };
    if (status >= 200 && status < 300) return { step: "success" };
    if (status === 401) return previousWasUnauthorized ? { step: "pause" } : { step: "refreshToken" };
    // An earlier send of this request (its answer lost) still runs: its outcome will be
    // this key's, replayed. Merging would drop the write: the answer has no `current`.
    if (status === 409 && outcome.code === "idempotency_key_in_use") return waitOrBackoff();
    if (status === 409 || status === 412) return { step: "merge" };
    if (status === 410) return { step: "tombstone" };
    if (status === 429 || (status >= 500 && status < 600)) return waitOrBackoff();
    return { step: "reject" };
  }

  /** Full jitter: uniform in [0, min(cap, base * 2^attempt)]. */
  backoff(attempt: number, random: () => number): number {
    const ceiling = Math.min(this.cap, this.base * Math.pow(2, Math.min(attempt, 30)));
    return ceiling * random();
  }
}

const months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const httpDate = /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d{2}) (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) (\d{4}) (\d{2}):(\d{2}):(\d{2}) GMT$/;

/** Retry-After in seconds: delta-seconds or an HTTP date (IMF-fixdate); null when unreadable. */
export function retryAfterSeconds(value: string | null | undefined, nowMs: number): number | null {
  const text = value?.replace(/^[ \t]+|[ \t]+$/g, "");
  if (!text) return null;
  if (/^[0-9]*\.?[0-9]+([eE][+-]?[0-9]+)?$/.test(text)) return Number(text);
  const m = httpDate.exec(text);
  if (!m) return null;
  const at = Date.UTC(Number(m[4]), months.indexOf(m[3]), Number(m[2]), Number(m[5]), Number(m[6]), Number(m[7]));
  return Math.max(0, (at - nowMs) / 1000);
}

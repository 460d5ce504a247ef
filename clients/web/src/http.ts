// Errors that name their cause: the request (its method and full URL), the status and
// the server's problem (its title and detail, when the answer is problem+json), or the
// network failure under it; and the base URL the engine puts `/v1/...` after. Before,
// a baseURL ending in /v1 said `GET /v1: 404` (the server's "no resource called v1"
// dropped), a wrong port a bare `TypeError: Failed to fetch`, and a trailing slash
// made every request go to `//v1`.

/** The server answered with an error status. */
export class HttpError extends Error {
  constructor(readonly method: string, readonly url: string, readonly status: number, readonly problem: unknown, statusText = "") {
    super(httpMessage(method, url, status, problem, statusText));
    this.name = "HttpError";
  }
}

/** No answer came: the server is unreachable (offline, a wrong host or port, CORS refused, DNS). */
export class NetworkError extends Error {
  constructor(readonly method: string, readonly url: string, readonly cause: unknown) {
    super(`${method} ${url}: no answer from the server (${describeCause(cause)}); offline, or the base URL or the server's CORS settings are wrong`);
    this.name = "NetworkError";
  }
}

function describeCause(cause: unknown): string {
  if (cause instanceof Error) return `${cause.name}: ${cause.message}`;
  return String(cause);
}

/** `GET https://host/v1/x: 404 Not Found (not_found): no resource called x`: what the answer says, whatever of it there is. */
export function httpMessage(method: string, url: string, status: number, problem: unknown, statusText = ""): string {
  const p = (problem && typeof problem === "object" ? problem : {}) as { title?: unknown; detail?: unknown; code?: unknown };
  const title = typeof p.title === "string" && p.title ? p.title : statusText;
  const code = typeof p.code === "string" && p.code ? ` (${p.code})` : "";
  const detail = typeof p.detail === "string" && p.detail ? `: ${p.detail}` : "";
  return `${method} ${url}: ${status}${title ? ` ${title}` : ""}${code}${detail}`;
}

/** The HttpError of an answer, its problem read when the body is JSON (problem+json). */
export async function httpError(method: string, url: string, res: Response): Promise<HttpError> {
  const type = res.headers.get("Content-Type") ?? "";
  const problem = type.includes("json") ? await res.json().catch(() => null) : null;
  return new HttpError(method, url, res.status, problem, res.statusText);
}

/**
 * The server's base URL as the engine puts paths after it: trailing slashes dropped. One
 * that ends in `/v1` is refused: the engine adds `/v1` itself, and the server's answer
 * to `/v1/v1` is a 404 that looks like a missing resource.
 */
export function baseURLOf(given: string): string {
  if (typeof given !== "string") throw new TypeError(`EngineOptions.baseURL must be a string (the server's origin), not ${typeof given}`);
  const trimmed = given.replace(/\/+$/, "");
  if (/\/v1$/i.test(trimmed)) {
    throw new TypeError(`EngineOptions.baseURL "${given}" ends in /v1: pass the server's origin (and any path prefix it is served under), such as "${trimmed.slice(0, -3) || "https://ferry.example.com"}"; the engine adds /v1 to every request`);
  }
  return trimmed;
}

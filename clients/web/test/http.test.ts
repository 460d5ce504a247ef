// Errors that name their cause (the method, the full URL, the status, the server's
// problem; the network failure under one with no answer), the base URL normalised,
// and continuous mode saying each failed pass (an `error` event) and its end.
import { test } from "node:test";
import assert from "node:assert/strict";
import { baseURLOf, httpMessage, httpError, HttpError, NetworkError } from "../src/http.js";
import { SyncEngine, SyncEvent } from "../src/engine.js";
import { FerryStore } from "../src/store.js";

test("a trailing slash is dropped; a base URL ending in /v1 is refused, saying to pass the origin", () => {
  assert.equal(baseURLOf("http://127.0.0.1:8080/"), "http://127.0.0.1:8080");
  assert.equal(baseURLOf("https://example.com/ferry//"), "https://example.com/ferry");
  assert.equal(baseURLOf("https://example.com/v1api"), "https://example.com/v1api");
  for (const url of ["http://127.0.0.1:8080/v1", "http://127.0.0.1:8080/v1/"]) {
    assert.throws(() => baseURLOf(url), (e: unknown) => e instanceof TypeError && e.message.includes(url) && e.message.includes('"http://127.0.0.1:8080"'));
  }
});

test("an error answer's message has the method, the URL, the status and the problem's title, code and detail", () => {
  assert.equal(httpMessage("GET", "http://h/v1/v1", 404, { title: "Not Found", code: "not_found", detail: "no resource called v1" }),
    "GET http://h/v1/v1: 404 Not Found (not_found): no resource called v1");
  assert.equal(httpMessage("GET", "http://h/v1", 502, null, "Bad Gateway"), "GET http://h/v1: 502 Bad Gateway");
  assert.equal(httpMessage("GET", "http://h/v1", 500, "oops"), "GET http://h/v1: 500");
});

test("a problem+json answer is read into the HttpError; another body is not", async () => {
  const problem = { type: "about:blank", title: "Not Found", status: 404, code: "not_found", detail: "no resource called v1" };
  const e = await httpError("GET", "http://h/v1/v1", new Response(JSON.stringify(problem), { status: 404, headers: { "Content-Type": "application/problem+json" } }));
  assert.ok(e instanceof HttpError);
  assert.deepEqual([e.status, e.url, e.problem], [404, "http://h/v1/v1", problem]);
  assert.ok(e.message.includes("no resource called v1"), e.message);
  const html = await httpError("GET", "http://h/v1", new Response("<html>", { status: 404, headers: { "Content-Type": "text/html" } }));
  assert.equal(html.problem, null);
});

/** Just what the engine touches before and around a round's requests: no IndexedDB. */
function fakeStore(): FerryStore {
  return {
    name: "test", schema: null,
    listen: () => () => {}, broadcast: () => {},
    transaction: async () => undefined,
    operations: async () => [],
    state: async (key: string) => (key === "cursor" ? "c0" : undefined),
  } as unknown as FerryStore;
}

type Fetch = (url: string, init: RequestInit) => Promise<Response>;
const engineWith = (baseURL: string, f: Fetch) =>
  new SyncEngine(fakeStore(), { baseURL, token: async () => "t", fetch: f as typeof fetch, initialSyncByIndex: false });
const json = (body: unknown, status = 200, type = "application/json") => new Response(JSON.stringify(body), { status, headers: { "Content-Type": type } });

test("the engine refuses a base URL ending in /v1 at construction, and a trailing slash makes no //v1", async () => {
  assert.throws(() => engineWith("http://h/v1", async () => json({})), /ends in \/v1/);
  const urls: string[] = [];
  const engine = engineWith("http://h/", async (url) => { urls.push(url); return json({ resources: [] }); });
  await engine.upload();
  assert.deepEqual(urls, ["http://h/v1"]);
});

test("no answer is a NetworkError naming the URL, its cause kept; an error answer an HttpError with the server's detail", async () => {
  const cause = new TypeError("Failed to fetch");
  const offline = engineWith("http://127.0.0.1:1", async () => { throw cause; });
  await assert.rejects(offline.upload(), (e: unknown) =>
    e instanceof NetworkError && e.url === "http://127.0.0.1:1/v1" && e.cause === cause && e.message.includes("http://127.0.0.1:1/v1") && e.message.includes("Failed to fetch"));
  const wrong = engineWith("http://h/api", async () => json({ title: "Not Found", status: 404, code: "not_found", detail: "no route" }, 404, "application/problem+json"));
  await assert.rejects(wrong.upload(), (e: unknown) => e instanceof HttpError && e.message === "GET http://h/api/v1: 404 Not Found (not_found): no route");
  const notFerry = engineWith("http://h", async () => new Response("<html>", { status: 200, headers: { "Content-Type": "text/html" } }));
  await assert.rejects(notFerry.upload(), /lists no resources; is http:\/\/h a Ferry server/);
});

test("continuous mode says each failed pass (offline, or the server's status) and when a pass succeeds again", async () => {
  let mode: "offline" | "error" | "up" = "offline";
  const f: Fetch = (url, init) => {
    if (mode === "offline") return Promise.reject(new TypeError("Failed to fetch"));
    if (mode === "error") return Promise.resolve(json({ title: "Service Unavailable", status: 503, code: "unavailable", detail: "down" }, 503, "application/problem+json"));
    if (url.endsWith("/v1")) return Promise.resolve(json({ resources: [] }));
    // The live step: held until stop() aborts it.
    if ((init.headers as Record<string, string>)["Accept"] === "text/event-stream") {
      return new Promise((_, reject) => init.signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError"))));
    }
    return Promise.resolve(json({ changes: [], cursor: "c1", has_more: false }));
  };
  const engine = engineWith("http://127.0.0.1:1", f);
  const events: SyncEvent[] = [];
  let recovered!: () => void;
  const done = new Promise<void>((resolve) => { recovered = resolve; });
  engine.on((e) => {
    events.push(e);
    if (e.type === "error") {
      // The next pass: a 503, then the server back (kick ends the backoff's wait).
      mode = mode === "offline" ? "error" : "up";
      engine.kick();
    }
    if (e.type === "recovered") recovered();
  });
  engine.start();
  await done;
  await engine.stop();
  const said = events.filter((e) => e.type === "error" || e.type === "recovered");
  assert.equal(said.length, 3, JSON.stringify(said));
  const [first, second] = said as Extract<SyncEvent, { type: "error" }>[];
  assert.deepEqual([first.offline, first.status, first.url], [true, null, "http://127.0.0.1:1/v1"]);
  assert.ok(first.message.includes("http://127.0.0.1:1/v1") && first.error instanceof NetworkError, first.message);
  assert.ok(first.retryInSeconds >= 0 && first.retryInSeconds <= 60);
  assert.deepEqual([second.offline, second.status], [false, 503]);
  assert.ok(second.message.includes("down"), second.message);
  assert.equal(said[2].type, "recovered");
});

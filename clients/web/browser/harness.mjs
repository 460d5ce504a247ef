// A same-origin server for the browser tests: the built library and the test page, and
// /v1 proxied to a real `ferry serve` through faults the test turns on: requests dropped
// before the server sees them, answers lost after the server applied the request.
import { createServer, request as httpRequest } from "node:http";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join, normalize } from "node:path";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const types = { ".js": "text/javascript", ".html": "text/html", ".css": "text/css", ".json": "application/json" };

export function startHarness(ferryPort, staticRoot = root) {
  const open = new Set(), waiting = new Set();
  const faults = {
    dropRequests: 0, loseAnswers: 0, offline: false, hold: false, offlineAll: false, seen: [], urls: [], streams: 0,
    /** The `Authorization` header of each request of `all`, at the same index: whose it was. */
    auth: [],
    /** `<status> <url>` of every /v1 answer passed on (tests clear it). */
    answers: [],
    /** Every /v1 request's URL, in order (`urls`, which tests clear, without ever being cleared). */
    all: [],
    /**
     * `POST /v1/changes/wait` requests made: the `body` of each, its `answer` and
     * `answeredAt` (the length of `all` then) once answered, `ended` once closed.
     */
    waits: [],
    /** Event streams (`Accept: text/event-stream`) now open through the proxy. */
    get open() { return open.size; },
    /** Waits on every stream (`POST /v1/changes/wait`) now held open through the proxy. */
    get waiting() { return waiting.size; },
    /**
     * Set by a test: `{match(url), pass, held: []}`. Requests `match` names pass `pass`
     * times, then are held (do not reach the server, are not answered); each held one is
     * noted with `ended`: "aborted" once the client gives it up, and `release()`, which
     * sends it on to the server after all (a request held mid-download).
     */
    gate: null,
    /**
     * Set by a test: the `max-age` of a public stream's page as passed on, in seconds
     * (the server's is `live.public_page_max_age_seconds`, 1 here). A deployment may
     * choose minutes; a test that needs the browser's copy to stay fresh sets it.
     */
    publicMaxAge: null,
    /** Cuts every open event stream, as a network change or a proxy's timeout would. */
    cutStreams() { for (const socket of open) socket.destroy(); },
  };
  const server = createServer((req, res) => {
    if (req.url.startsWith("/v1")) {
      faults.seen.push(`${req.method} ${req.url.split("?")[0]} ${req.headers["idempotency-key"] ?? ""}`);
      faults.urls.push(req.url);
      faults.all.push(req.url);
      faults.auth.push(req.headers.authorization ?? "");
      // The faults of uploads spare the wait on every stream: a POST, but a read.
      const upload = req.method !== "GET" && !req.url.startsWith("/v1/changes/wait");
      if (faults.offline || faults.offlineAll || (upload && faults.dropRequests > 0 && faults.dropRequests--)) {
        req.resume();
        res.socket.destroy();
        return;
      }
      // Held: the request never reaches the server and never gets an answer.
      if (upload && faults.hold) return;
      const gate = faults.gate;
      if (gate && gate.match(req.url)) {
        if (gate.pass > 0) gate.pass--;
        else {
          const held = { url: req.url, ended: null, release: () => forward() };
          gate.held.push(held);
          res.on("close", () => { held.ended ??= res.writableFinished ? "answered" : "aborted"; });
          return;
        }
      }
      forward();
      return;
    }
    /** Sends a /v1 request on to the server, through the faults that come after the gate. */
    function forward() {
      const upload = req.method !== "GET" && !req.url.startsWith("/v1/changes/wait");
      const lose = upload && faults.loseAnswers > 0 && faults.loseAnswers--;
      let wait = null;
      if (req.method === "POST" && req.url.startsWith("/v1/changes/wait")) {
        wait = { body: "", answer: "" };
        faults.waits.push(wait);
        req.on("data", (chunk) => { wait.body += chunk; });
        waiting.add(res);
        // Ended by the client (a kick, stop()) before its answer, or answered.
        res.on("close", () => { waiting.delete(res); wait.ended = res.writableFinished ? "answered" : "aborted"; });
      }
      if ((req.headers.accept ?? "").includes("text/event-stream")) {
        faults.streams++;
        const socket = res.socket;
        open.add(socket);
        res.on("close", () => open.delete(socket));
      }
      const upstream = httpRequest({ host: "127.0.0.1", port: ferryPort, path: req.url, method: req.method, headers: req.headers }, (answer) => {
        if (lose) {
          // The server applied it; the client never hears.
          answer.resume();
          answer.on("end", () => res.socket.destroy());
          return;
        }
        faults.answers.push(`${answer.statusCode} ${req.url}`);
        const cacheControl = answer.headers["cache-control"];
        if (faults.publicMaxAge !== null && cacheControl?.startsWith("public")) {
          answer.headers["cache-control"] = cacheControl.replace(/max-age=\d+/, `max-age=${faults.publicMaxAge}`);
        }
        res.writeHead(answer.statusCode, answer.headers);
        if (wait) {
          // The wait's answer, and where in `urls` it came: what the client fetched next.
          // (Noted before each chunk is passed on: the client cannot have asked anything after it yet.)
          answer.on("data", (chunk) => { wait.answer += chunk; wait.answeredAt = faults.all.length; });
        }
        answer.pipe(res);
      });
      upstream.on("error", () => res.socket.destroy());
      req.pipe(upstream);
    }
    const path = normalize(decodeURIComponent(req.url.split("?")[0])).replace(/^(\.\.[/\\])+/, "");
    if (faults.offlineAll) {
      // The whole network is down: the page can only load from its service worker's cache.
      req.resume();
      res.socket.destroy();
      return;
    }
    const file = path === "/" ? "/browser/page.html" : path.endsWith("/") ? `${path}index.html` : path;
    try {
      const body = readFileSync(join(staticRoot, file));
      res.writeHead(200, { "Content-Type": types[file.slice(file.lastIndexOf("."))] ?? "application/octet-stream", "Cache-Control": "no-store" });
      res.end(body);
    } catch {
      res.writeHead(404);
      res.end();
    }
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve({ server, faults, origin: `http://127.0.0.1:${server.address().port}` })));
}

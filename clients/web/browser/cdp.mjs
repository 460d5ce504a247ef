// Drives headless Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe,
// fd 3 to the browser, fd 4 from it; messages end in NUL): no library, no WebSocket.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export class Browser {
  static async launch() {
    const profile = mkdtempSync(join(tmpdir(), "ferryweb-"));
    const chrome = spawn(process.env.CHROMIUM || "chromium", [
      "--headless=new", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu", "--no-first-run",
      "--no-default-browser-check", `--user-data-dir=${profile}`, "about:blank",
    ], { stdio: ["ignore", "ignore", "pipe", "pipe", "pipe"], detached: true });
    chrome.stderr.on("data", () => {});
    return new Browser(chrome, profile);
  }

  constructor(chrome, profile) {
    this.chrome = chrome;
    this.profile = profile;
    this.next = 1;
    this.waiting = new Map();
    this.handlers = new Set();
    let buffer = "";
    chrome.stdio[4].on("data", (chunk) => {
      buffer += chunk.toString("utf8");
      let end;
      while ((end = buffer.indexOf("\0")) >= 0) {
        const message = JSON.parse(buffer.slice(0, end));
        buffer = buffer.slice(end + 1);
        if (message.id && this.waiting.has(message.id)) {
          const { resolve, reject } = this.waiting.get(message.id);
          this.waiting.delete(message.id);
          if (message.error) reject(new Error(`${message.error.message} ${message.error.data ?? ""}`));
          else resolve(message.result);
        } else {
          for (const h of this.handlers) h(message);
        }
      }
    });
  }

  send(method, params = {}, sessionId) {
    const id = this.next++;
    const message = { id, method, params };
    if (sessionId) message.sessionId = sessionId;
    this.chrome.stdio[3].write(JSON.stringify(message) + "\0");
    return new Promise((resolve, reject) => this.waiting.set(id, { resolve, reject }));
  }

  /** A new browser context (its own storage: another "device") with one page at `url`. */
  async page(url) {
    const { browserContextId } = await this.send("Target.createBrowserContext");
    return this.pageIn(browserContextId, url);
  }

  /** Another tab in the same context (shares IndexedDB). */
  async pageIn(browserContextId, url) {
    const { targetId } = await this.send("Target.createTarget", { url: "about:blank", browserContextId });
    const { sessionId } = await this.send("Target.attachToTarget", { targetId, flatten: true });
    const page = new Page(this, sessionId, targetId, browserContextId);
    await this.send("Runtime.enable", {}, sessionId);
    await this.send("Page.enable", {}, sessionId);
    await page.goto(url);
    return page;
  }

  async close() {
    try { await Promise.race([this.send("Browser.close"), new Promise((r) => setTimeout(r, 3000))]); } catch {}
    const exited = this.chrome.exitCode !== null ? Promise.resolve() : new Promise((r) => this.chrome.once("exit", r));
    // Its whole process group (launched detached): a renderer or crashpad child left behind
    // keeps writing into the profile while it is removed.
    try { process.kill(-this.chrome.pid, "SIGKILL"); } catch { this.chrome.kill("SIGKILL"); }
    await exited;
    // Cleanup only: a failure here must not hide the results (a full run once lost them to ENOTEMPTY).
    try { rmSync(this.profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }); } catch (e) {
      console.error(`# could not remove ${this.profile}: ${e.code ?? e}`);
    }
  }
}

export class Page {
  constructor(browser, sessionId, targetId, contextId) {
    Object.assign(this, { browser, sessionId, targetId, contextId });
  }

  async goto(url) {
    const loaded = new Promise((resolve) => {
      const h = (m) => {
        if (m.sessionId === this.sessionId && m.method === "Page.loadEventFired") {
          this.browser.handlers.delete(h);
          resolve();
        }
      };
      this.browser.handlers.add(h);
    });
    await this.browser.send("Page.navigate", { url }, this.sessionId);
    await loaded;
    await this.eval("window.ready");
  }

  /** Evaluates an expression (awaiting a promise) and returns its JSON value; page errors throw. */
  async eval(expression) {
    const r = await this.browser.send("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true }, this.sessionId);
    if (r.exceptionDetails) throw new Error(`in page: ${r.exceptionDetails.exception?.description ?? r.exceptionDetails.text}`);
    return r.result.value;
  }

  async close() {
    await this.browser.send("Target.closeTarget", { targetId: this.targetId });
  }
}

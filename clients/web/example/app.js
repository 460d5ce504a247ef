// The todo example (examples/todo) on FerryWeb: lists and their ranked todos, kept in
// IndexedDB, editable offline, synced continuously. Static files: serve this folder and
// ../dist from any static server (or behind the same origin as ferry serve).
import { FerryStore, SyncEngine, Rank } from "../dist/src/index.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const server = (params.get("server") ?? localStorage.getItem("ferry.server") ?? location.origin).replace(/\/+$/, "");
let token = params.get("token") ?? localStorage.getItem("ferry.token");
let engine, store, selected = localStorage.getItem("ferry.list");
// What stops sync, shown in the status line: the last failed pass of continuous mode
// (until one succeeds), or a server without this app's resources.
let failure = null, wrongServer = null, checked = false;
const colors = { blue: "#36c", green: "#3a6", orange: "#e83", red: "#c33", gray: "#888" };
const byRank = (a, b) => Rank.compare(a.rank, b.rank) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

if ("serviceWorker" in navigator) navigator.serviceWorker.register("sw.js").catch(() => {});

async function signIn(user, password) {
  const answer = await fetch(`${server}/v1/auth/token`, { method: "POST", headers: { Authorization: `Basic ${btoa(`${user}:${password}`)}` } });
  if (!answer.ok) throw new Error(answer.status === 401 ? "wrong user or password" : `sign-in failed (${answer.status})`);
  return (await answer.json()).token;
}

async function start() {
  localStorage.setItem("ferry.token", token);
  $("signin").hidden = true;
  $("app").hidden = false;
  // A list's todos are read by their list (store.query), not all todos filtered.
  store = await FerryStore.open("todo", { indexes: { todos: ["list_id"] } });
  engine = new SyncEngine(store, {
    baseURL: server,
    // A refused token (expired, revoked) sends the user back to sign in.
    token: async (refresh) => {
      if (refresh) { localStorage.removeItem("ferry.token"); location.reload(); }
      return token;
    },
  });
  engine.on((e) => {
    if (e.type === "error") failure = e;
    if (e.type === "recovered") { failure = null; checkServer(); }
    if (["changed", "written", "removed", "rejected", "error", "recovered"].includes(e.type)) void render();
  });
  addEventListener("online", () => engine.kick());
  engine.start();
  checkServer();
  await render();
}

/**
 * A server migrated with another app's schema (deploy/run.sh's examples/study) takes
 * none of these writes: said, rather than "synced". Asked again once back online.
 */
function checkServer() {
  if (checked) return;
  engine.resources().then((resources) => {
    checked = true;
    const missing = ["lists", "todos"].filter((name) => !resources.some((r) => r.name === name));
    wrongServer = missing.length ? `${server} has no ${missing.join(" or ")}: migrate it with examples/todo/migrations (docs/WEB.md, "The example app")` : null;
    void render();
  }, () => {});
}

async function render() {
  const lists = (await store.all("lists")).sort((a, b) => (a.title < b.title ? -1 : 1));
  const operations = await store.operations();
  const pending = new Set(operations.filter((o) => o.state !== "rejected").map((o) => o.rowID));
  const refused = operations.filter((o) => o.state === "rejected");
  if (!lists.some((l) => l.id === selected) && !pending.has(selected)) selected = lists[0]?.id ?? null;
  if (selected) localStorage.setItem("ferry.list", selected);
  $("lists").replaceChildren(...lists.map((list) => {
    const li = document.createElement("li");
    li.dataset.id = list.id;
    li.className = list.id === selected ? "selected" : "";
    const dot = document.createElement("span");
    dot.className = "dot";
    dot.style.background = colors[list.color] ?? colors.blue;
    li.append(dot, list.title);
    li.onclick = () => { selected = list.id; localStorage.setItem("ferry.list", selected); void render(); };
    return li;
  }));
  const list = lists.find((l) => l.id === selected);
  $("list-name").textContent = list ? list.title : "No list";
  $("new-todo").hidden = !list;
  const todos = (selected ? await store.query("todos", "list_id", selected) : []).sort(byRank);
  $("todos").replaceChildren(...todos.map((todo, i) => {
    const li = document.createElement("li");
    li.dataset.id = todo.id;
    li.className = (todo.done ? "done " : "") + (pending.has(todo.id) ? "pending" : "");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.checked = !!todo.done;
    box.onchange = () => write([{ resource: "todos", id: todo.id, kind: "update", fields: { done: box.checked } }]);
    const title = document.createElement("span");
    title.textContent = todo.title;
    const button = (label, action) => { const b = document.createElement("button"); b.textContent = label; b.onclick = action; return b; };
    li.append(box, title,
      button("↑", () => move(todos, i, i - 1)), button("↓", () => move(todos, i, i + 2)),
      button("✕", () => write([{ resource: "todos", id: todo.id, kind: "delete" }])));
    return li;
  }));
  const waiting = pending.size;
  const said = [navigator.onLine ? "online" : "offline"];
  if (wrongServer) said.push(wrongServer);
  if (failure) said.push(failure.offline ? `no answer from ${server}, retrying` : `sync failed: ${failure.message}`);
  if (refused.length) said.push(`${refused.length} refused: ${refused[0].lastError?.detail ?? refused[0].lastError?.title ?? "by the server"}`);
  said.push(waiting ? `${waiting} to sync` : wrongServer || failure || refused.length ? "not up to date" : "synced");
  $("status").textContent = said.join(", ");
  $("status").className = navigator.onLine && !wrongServer && !failure && !refused.length ? "" : "offline";
}

/** An edit, its refusal (a resource or field the server lacks: WriteRefused) shown. */
async function write(edits) {
  try {
    return await engine.write(edits);
  } catch (error) {
    $("status").textContent = `not saved: ${error.message}`;
    $("status").className = "offline";
    return [];
  }
}

/** A key between the neighbours of position `to` (the row itself left out): nothing else changes. */
function rankBetween(todos, to, except) {
  const rest = todos.filter((t) => t.id !== except);
  const before = rest[to - 1]?.rank ?? null;
  // Equal keys (two devices inserted at one spot offline) leave no room: bound by the next larger.
  const after = rest.slice(to).find((t) => before === null || t.rank > before)?.rank ?? null;
  return Rank.between(before, after);
}

function move(todos, from, to) {
  const target = Math.max(0, Math.min(todos.length, to));
  const index = target > from ? target - 1 : target;
  if (index === from) return;
  void write([{ resource: "todos", id: todos[from].id, kind: "update", fields: { rank: rankBetween(todos, index, todos[from].id) } }]);
}

$("new-list").onsubmit = async (e) => {
  e.preventDefault();
  const [id] = await write([{ resource: "lists", kind: "create", fields: { title: $("list-title").value } }]);
  if (!id) return;
  selected = id;
  $("list-title").value = "";
};
$("new-todo").onsubmit = async (e) => {
  e.preventDefault();
  const todos = (selected ? await store.query("todos", "list_id", selected) : []).sort(byRank);
  await write([{ resource: "todos", kind: "create",
                        fields: { list_id: selected, title: $("todo-title").value, rank: rankBetween(todos, todos.length, null) } }]);
  $("todo-title").value = "";
};
$("signin").onsubmit = async (e) => {
  e.preventDefault();
  try {
    token = await signIn($("user").value, $("password").value);
    await start();
  } catch (error) {
    $("signin-error").textContent = error.message;
  }
};
addEventListener("offline", () => void render());

if (token) await start();
else $("signin").hidden = false;
window.ready = true;

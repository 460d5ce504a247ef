// The todo example (examples/todo) on FerryWeb: lists and their ranked todos, kept in
// IndexedDB, editable offline, synced continuously. Static files: serve this folder and
// ../dist from any static server (or behind the same origin as ferry serve).
import { FerryStore, SyncEngine, Rank } from "../dist/src/index.js";

const $ = (id) => document.getElementById(id);
const params = new URLSearchParams(location.search);
const server = params.get("server") ?? localStorage.getItem("ferry.server") ?? location.origin;
let token = params.get("token") ?? localStorage.getItem("ferry.token");
let engine, store, selected = localStorage.getItem("ferry.list");
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
  engine.on((e) => { if (e.type === "changed" || e.type === "written" || e.type === "removed" || e.type === "rejected") void render(); });
  addEventListener("online", () => engine.kick());
  engine.start();
  await render();
}

async function render() {
  const lists = (await store.all("lists")).sort((a, b) => (a.title < b.title ? -1 : 1));
  const pending = new Set((await store.operations()).filter((o) => o.state !== "rejected").map((o) => o.rowID));
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
    box.onchange = () => engine.write([{ resource: "todos", id: todo.id, kind: "update", fields: { done: box.checked } }]);
    const title = document.createElement("span");
    title.textContent = todo.title;
    const button = (label, action) => { const b = document.createElement("button"); b.textContent = label; b.onclick = action; return b; };
    li.append(box, title,
      button("↑", () => move(todos, i, i - 1)), button("↓", () => move(todos, i, i + 2)),
      button("✕", () => engine.write([{ resource: "todos", id: todo.id, kind: "delete" }])));
    return li;
  }));
  const waiting = pending.size;
  $("status").textContent = `${navigator.onLine ? "online" : "offline"}${waiting ? `, ${waiting} to sync` : ", synced"}`;
  $("status").className = navigator.onLine ? "" : "offline";
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
  void engine.write([{ resource: "todos", id: todos[from].id, kind: "update", fields: { rank: rankBetween(todos, index, todos[from].id) } }]);
}

$("new-list").onsubmit = async (e) => {
  e.preventDefault();
  const [id] = await engine.write([{ resource: "lists", kind: "create", fields: { title: $("list-title").value } }]);
  selected = id;
  $("list-title").value = "";
};
$("new-todo").onsubmit = async (e) => {
  e.preventDefault();
  const todos = (selected ? await store.query("todos", "list_id", selected) : []).sort(byRank);
  await engine.write([{ resource: "todos", kind: "create",
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

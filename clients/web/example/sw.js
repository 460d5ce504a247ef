// The app shell works offline: the page, its code and FerryWeb come from this cache when
// the network fails (network first, so a deploy is seen at once when online). The data
// itself lives in IndexedDB; /v1 is never cached here.
const CACHE = "ferry-todo-v1";
const SHELL = ["./", "./index.html", "./app.js", "./app.css",
  "../dist/src/index.js", "../dist/src/rank.js", "../dist/src/json.js", "../dist/src/retry.js",
  "../dist/src/merge.js", "../dist/src/planner.js", "../dist/src/store.js", "../dist/src/engine.js",
  "../dist/src/eventstream.js", "../dist/src/live.js", "../dist/src/initialsync-worker.js"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));
self.addEventListener("fetch", (event) => {
  const url = new URL(event.request.url);
  if (event.request.method !== "GET" || url.pathname.startsWith("/v1")) return;
  event.respondWith(
    fetch(event.request).then((answer) => {
      const copy = answer.clone();
      caches.open(CACHE).then((cache) => cache.put(event.request, copy));
      return answer;
    }).catch(() => caches.match(event.request, { ignoreSearch: true })),
  );
});

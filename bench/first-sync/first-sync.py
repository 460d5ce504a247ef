"""A full first sync of everything a user can read, by Index pages
(paging snapshots, resource by resource) and by the changes feed from the
start, each with and without gzip: bytes on the wire and wall time
(bench/first-sync/first-sync.sh)."""
import http.client, json, sys, time, zlib

RESOURCES = ["study_sets", "terms", "folders", "folder_sets", "set_collaborators"]

def fetch(conn, path, token, gzip):
    headers = {"Authorization": f"Bearer {token}", "Accept-Encoding": "gzip" if gzip else "identity"}
    conn.request("GET", path, headers=headers)
    response = conn.getresponse()
    raw = response.read()
    if response.status != 200:
        raise SystemExit(f"GET {path}: {response.status} {raw[:200]!r}")
    head = sum(len(k) + len(v) + 4 for k, v in response.getheaders()) + 17
    body = zlib.decompress(raw, 16 + zlib.MAX_WBITS) if response.getheader("Content-Encoding") == "gzip" else raw
    # Answers under compression.min_bytes (1 KiB by default) go as they are.
    if gzip and response.getheader("Content-Encoding") != "gzip" and len(body) > 1024:
        raise SystemExit(f"GET {path}: asked for gzip, got {response.getheader('Content-Encoding')}")
    return json.loads(body), len(raw) + head

def by_index(conn, token, gzip):
    rows = wire = requests = 0
    for resource in RESOURCES:
        path = f"/v1/{resource}?limit=1000"
        while path:
            page, size = fetch(conn, path, token, gzip)
            rows += len(page["data"]); wire += size; requests += 1
            path = page["paging"]["next"]
    return rows, wire, requests

def by_feed(conn, token, gzip):
    rows = wire = requests = 0
    path = "/v1/changes?limit=1000"
    while True:
        page, size = fetch(conn, path, token, gzip)
        rows += len(page["changes"]); wire += size; requests += 1
        if not page["has_more"]:
            return rows, wire, requests
        path = f"/v1/changes?since={page['cursor']}&limit=1000"

def main():
    port, token = int(sys.argv[1]), sys.argv[2]
    results = {}
    for name, run in (("Index pages", by_index), ("changes feed", by_feed)):
        for gzip in (False, True):
            best = None
            for _ in range(3):
                conn = http.client.HTTPConnection("127.0.0.1", port)
                started = time.perf_counter()
                rows, wire, requests = run(conn, token, gzip)
                elapsed = time.perf_counter() - started
                conn.close()
                best = elapsed if best is None else min(best, elapsed)
            results[(name, gzip)] = (rows, wire, requests, best)
            print(f"{name:13} {'gzip    ' if gzip else 'identity'}: {rows} rows in {requests} requests, "
                  f"{wire / 1e6:.2f} MB on the wire, {best:.2f} s (best of 3)")
    for name in ("Index pages", "changes feed"):
        plain, packed = results[(name, False)], results[(name, True)]
        print(f"{name}: gzip sends {plain[1] / packed[1]:.1f}x fewer bytes, time x{packed[3] / plain[3]:.2f}")

if __name__ == "__main__":
    main()

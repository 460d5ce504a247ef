#!/usr/bin/env bash
# Issue 46: subscribing to a public set of 5,000 terms, the rows are in the
# device's store within 1 s. A release `ferry serve` of examples/study (stream
# `set`, public sets) holds the set, seeded by SQL among OTHER_SETS other
# public sets of 10 terms; a FerryKit device (FerryKitBenchTests'
# subscribingToAPublicSet, with a file store, already synced) subscribes to it
# and syncs once; the time from `subscribe` to the end of that sync, RUNS times,
# each into a fresh store. Before the device, the server's part alone, three
# times: the stream's pages walked over HTTP in FerryKit's page size.
#
#   FERRY_BIN=.build/release/ferry bench/public-sets/subscribe-set.sh          5,000 terms
#   TERMS=20000 RUNS=3 FERRY_BIN=... bench/public-sets/subscribe-set.sh
#
# Knobs: TERMS (5000), OTHER_SETS (1000), RUNS (5). The device is built in
# release with testability (as bench/ferrykit/ferrykit.sh builds it); BENCH_BUILD=debug
# runs the debug test build instead (no build here: a slower device, for a
# check of the script). Without FERRY_BIN the server is built in release too.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
TERMS=${TERMS:-5000}
OTHER_SETS=${OTHER_SETS:-1000}
RUNS=${RUNS:-5}
BENCH_BUILD=${BENCH_BUILD:-release}
source bench/lib.sh
bench_binary
bench_database bench_subscribe_set

bench_seed_public -v terms="$TERMS" -v others="$OTHER_SETS" <<'SQL'
INSERT INTO app.study_sets (creator_id, title, is_public)
SELECT (SELECT id FROM ferry.users WHERE name = 'creator'), t, true
  FROM (SELECT 'the set' UNION ALL SELECT 'other ' || s FROM generate_series(1, :others) s) titles(t);
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 6, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, CASE WHEN s.title = 'the set' THEN :terms ELSE 10 END) i;
SQL
SET_ID=$(psql -X -tA "$FERRY_DATABASE_MIGRATION_URL" -c "SELECT id FROM app.study_sets WHERE title = 'the set'")

bench_serve
bench_token device bench
bench_await_feed "limit=1&stream=set:$SET_ID" '"changes":\[\{'

# The server's part alone: the stream's pages, walked over one keep-alive connection as the
# device walks them, in pages of FerryKit's own size (SyncEngine.streamPageLimit, read from its
# source: 2,000 since stop 16, 500 before).
PAGE=$(sed -nE 's/^ *static let streamPageLimit = ([0-9_]+)$/\1/p' Sources/FerryKit/Subscriptions/SyncEngine+Subscriptions.swift | tr -d _)
[ -n "$PAGE" ] || { echo "subscribe-set: no streamPageLimit in Sources/FerryKit/Subscriptions/SyncEngine+Subscriptions.swift" >&2; exit 1; }
python3 - "$PORT" "$TOKEN" "$SET_ID" "$PAGE" <<'PY'
import http.client, json, sys, time
port, token, set_id, limit = int(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
conn = http.client.HTTPConnection("127.0.0.1", port)
for run in range(3):
    start, pages, entries, cursor = time.perf_counter(), 0, 0, None
    while True:
        conn.request("GET", f"/v1/changes?limit={limit}&stream=set:{set_id}" + (f"&since={cursor}" if cursor else ""),
                     headers={"Authorization": "Bearer " + token})
        page = json.loads(conn.getresponse().read())
        pages, entries, cursor = pages + 1, entries + len(page["changes"]), page["cursor"]
        if not page["has_more"]:
            break
    print(f"subscribe-set: the server's part, over HTTP: {entries} entries in {pages} pages of {limit} in {time.perf_counter() - start:.3f} s")
PY
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL" FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
if [ "$BENCH_BUILD" = release ]; then
  swift build -c release --build-tests -Xswiftc -enable-testing >/dev/null
  build=(-c release -Xswiftc -enable-testing)
else
  build=()
fi
echo "load before: $(uptime)"
FERRYKIT_BENCH=1 FERRYKIT_BENCH_SERVER="$BASE" FERRYKIT_BENCH_TOKEN="$TOKEN" FERRYKIT_BENCH_SET="$SET_ID" \
FERRYKIT_BENCH_TERMS="$TERMS" FERRYKIT_BENCH_RUNS="$RUNS" \
  swift test "${build[@]}" --skip-build --filter 'FerryKitBenchTests/subscribingToAPublicSet' 2>&1 \
  | grep -E '^ferrykit-bench:|✘|passed after|failed after'
echo "load after: $(uptime)"

#!/usr/bin/env bash
# bench/paging/paging.sh: Index paging snapshots on 100,000 terms in one set.
#
#   bench/paging/paging.sh
#
# Seeds one user with one set of BENCH_ROWS (default 100,000) terms, starts its own
# memcached and a release build of Ferry, then measures with curl over keep-alive:
#   page1   GET /v1/terms?set_id=S&limit=100: builds the ordered id list in
#           PostgreSQL, stores the snapshot in memcached, answers page 1
#   later   GET ...&paging_token=T&page=N for pages spread over the snapshot
#   bytes   memcached's `bytes` stat before and after one snapshot (values, keys and
#           item headers, as memcached counts them)
# "server" is curl's time_starttransfer - time_pretransfer: from the request sent
# to the first response byte, i.e. Ferry's time plus one loopback hop.
#
# Environment: FERRY_BENCH_OWNER_URL / FERRY_BENCH_APP_URL (server URLs without a
# database; default: the development services), BENCH_ROWS, BENCH_RUNS (default 30),
# BENCH_PORT, BENCH_MEMCACHED_PORT. The scratch database is dropped unless BENCH_KEEP.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OWNER=${FERRY_BENCH_OWNER_URL:-postgresql://ferry_owner:ferry_owner@127.0.0.1:54329}
APP=${FERRY_BENCH_APP_URL:-postgresql://ferry_app:ferry_app@127.0.0.1:54329}
DB=${BENCH_DATABASE:-ferry_bench_paging}
ROWS=${BENCH_ROWS:-100000}
RUNS=${BENCH_RUNS:-30}
PORT=${BENCH_PORT:-18490}
MPORT=${BENCH_MEMCACHED_PORT:-18491}
WORK=$(mktemp -d /tmp/ferry-bench-paging.XXXXXX)
PIDS=()
cleanup() {
  for pid in "${PIDS[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$WORK"
  if [ -z "${BENCH_KEEP:-}" ]; then
    psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

psql_owner() { psql -X -q -v ON_ERROR_STOP=1 "$OWNER/$1" "${@:2}"; }
memcached_bytes() {
  exec 3<>/dev/tcp/127.0.0.1/$MPORT
  printf 'stats\r\nquit\r\n' >&3
  awk '/STAT bytes / {print $3}' <&3 | tr -d '\r'
  exec 3<&-
}
# stats FILE -> "median p90 max" in ms
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "%.1f %.1f %.1f", a[int((NR+1)/2)]*1000, a[int(NR*0.9+0.5)]*1000, a[NR]*1000}'; }

(cd "$ROOT" && swift build -c release --product ferry >&2)

memcached -l 127.0.0.1 -p "$MPORT" -U 0 -m 512 -t 2 $( [ "$(id -u)" = 0 ] && echo "-u nobody" ) &
PIDS+=($!)

psql_owner postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" -c "CREATE DATABASE $DB"
FERRY_DATABASE_MIGRATION_URL="$OWNER/$DB" FERRY_DATABASE_URL="$APP/$DB" \
  "$ROOT/.build/release/ferry" migrate --dir "$ROOT/examples/study/migrations" >/dev/null
USER_ID=$(psql_owner "$DB" -At -c "SELECT ferry.create_user('bench', 'bench-password')")
TOKEN=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
psql_owner "$DB" -c "SELECT ferry.issue_token('$USER_ID', '\\x$HASH'::bytea, 86400)" >/dev/null
SET_ID=$(psql_owner "$DB" -At -c "INSERT INTO app.study_sets (creator_id, title) VALUES ('$USER_ID', 'big') RETURNING id")
psql_owner "$DB" >/dev/null <<SQL
INSERT INTO app.terms (set_id, word, definition, rank)
  SELECT '$SET_ID', 'word ' || g, 'definition of word ' || g, 'r' || lpad(g::text, 7, '0') || 'V'
    FROM generate_series(1, $ROWS) g;
VACUUM ANALYZE app.terms;
SQL

FERRY_DATABASE_URL="$APP/$DB" FERRY_LISTEN_PORT=$PORT FERRY_LISTEN_HOST=127.0.0.1 \
  FERRY_MEMCACHED_SERVERS=127.0.0.1:$MPORT FERRY_PAGING_TOKEN_TTL_SECONDS=900 FERRY_LOGGING_LEVEL=warning \
  "$ROOT/.build/release/ferry" serve >"$WORK/ferry.log" 2>&1 &
PIDS+=($!)
BASE=http://127.0.0.1:$PORT
for _ in $(seq 1 100); do curl -fs -o /dev/null "$BASE/readyz" && break; sleep 0.2; done
curl -fs "$BASE/readyz" >/dev/null || { echo "Ferry is not ready:" >&2; cat "$WORK/ferry.log" >&2; exit 1; }

AUTH="Authorization: Bearer $TOKEN"
FIRST="$BASE/v1/terms?set_id=$SET_ID&limit=100"
FORMAT='%{http_code} %{time_total} %{time_starttransfer} %{time_pretransfer}\n'

# One snapshot alone, for memcached's byte count.
before=$(memcached_bytes)
curl -fs -H "$AUTH" "$FIRST" -o "$WORK/page1.json"
after=$(memcached_bytes)
SNAPSHOT=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paging"]["token"])' "$WORK/page1.json")
TOTAL=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["paging"]["total"])' "$WORK/page1.json")

# Page 1, RUNS times over one keep-alive connection (after 3 warm-ups).
urls=()
for _ in $(seq 1 $((RUNS + 3))); do urls+=(-o /dev/null "$FIRST"); done
curl -s -H "$AUTH" -w "$FORMAT" "${urls[@]}" | tail -n "$RUNS" > "$WORK/page1.txt"
# Later pages spread over the snapshot (pages 2...1000).
urls=()
for i in $(seq 1 $((RUNS + 3))); do urls+=(-o /dev/null "$FIRST&paging_token=$SNAPSHOT&page=$(( (i * 337) % 999 + 2 ))"); done
curl -s -H "$AUTH" -w "$FORMAT" "${urls[@]}" | tail -n "$RUNS" > "$WORK/later.txt"

for name in page1 later; do
  if awk '$1 != 200 {bad=1} END {exit !bad}' "$WORK/$name.txt"; then echo "WARNING: $name had non-200 answers" >&2; fi
  awk '{print $2}' "$WORK/$name.txt" > "$WORK/$name.total"
  awk '{print $3 - $4}' "$WORK/$name.txt" > "$WORK/$name.server"
done

echo
echo "Index paging, $TOTAL terms in one set, limit=100, $RUNS runs each (ms: median / p90 / max)"
echo
echo "| request | total | server |"
echo "|---|---|---|"
echo "| page 1 (snapshot built) | $(stats "$WORK/page1.total" | sed 's/ / \/ /g') | $(stats "$WORK/page1.server" | sed 's/ / \/ /g') |"
echo "| later page | $(stats "$WORK/later.total" | sed 's/ / \/ /g') | $(stats "$WORK/later.server" | sed 's/ / \/ /g') |"
echo
echo "memcached bytes per snapshot: $((after - before)) (ids: $((TOTAL * 16)) = 16 per id)"

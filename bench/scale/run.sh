#!/usr/bin/env bash
# Ferry's cost against table size (issue 25): for each size, a fresh database
# seeded with that many terms (sets of 10 over many users, a "big" user with
# up to 100,000, a reader with 100 grants and 100 revocations in its feed
# window), a release `ferry serve`, and p50/p99 of seven operations measured
# one request at a time. At the largest size, auto_explain logs every plan
# once more and explain_check.py looks for JIT and executed sequential scans.
#
#   bench/scale/run.sh                     sizes 10000 100000 1000000
#   SIZES="10000 100000" bench/scale/run.sh
# At the largest size (from 200,000 terms) a "huge" user also owns 100,000
# terms, for page 1 of a 100,000-row snapshot.
#
# Needs the dev services (bash deploy/local.sh start) and python3; the plot
# needs matplotlib (pip install matplotlib). Writes bench/scale/results.jsonl,
# results.md and scale.png.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
SIZES=${SIZES:-"10000 100000 1000000"}
PORT=${PORT:-18483}
OUT=$ROOT/bench/scale
eval "$(bash deploy/local.sh env)"
LOCAL=${FERRY_LOCAL_DIR:-$ROOT/.local}
PG_PORT=${FERRY_PG_PORT:-54329}
BIN=${FERRY_BIN:-}
if [ -z "$BIN" ]; then
  swift build -c release --product ferry >/dev/null
  BIN=$(swift build -c release --show-bin-path)/ferry
fi
url_for() { python3 -c "import sys,urllib.parse as u; p=u.urlparse(sys.argv[1]); print(p._replace(path='/'+sys.argv[2]).geturl())" "$1" "$2"; }
su_psql() { runuser -u postgres -- psql -X -q -h "$LOCAL/run" -p "$PG_PORT" "$@"; }
SERVER_PID=
DB=
cleanup() {
  [ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2>/dev/null && wait "$SERVER_PID" 2>/dev/null || true
  [ -n "$DB" ] && su_psql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" || true
}
trap cleanup EXIT
: > "$OUT/results.jsonl"
LARGEST=$(tr ' ' '\n' <<<"$SIZES" | sort -n | tail -n1)
for size in $SIZES; do
  DB=scale_bench_${size}_$$
  su_psql -d postgres -c "CREATE DATABASE $DB OWNER ferry_owner"
  OWNER=$(url_for "$FERRY_DATABASE_MIGRATION_URL" "$DB")
  APP=$(url_for "$FERRY_DATABASE_URL" "$DB")
  FERRY_DATABASE_MIGRATION_URL=$OWNER "$BIN" migrate apply --dir examples/study/migrations >/dev/null
  big=5000
  huge=$(( size == LARGEST && size >= 200000 ? 100000 : 0 ))
  start=$(date +%s)
  psql -X -q -v ON_ERROR_STOP=1 -v terms="$size" -v big="$big" -v huge="$huge" "$OWNER" -f bench/scale/seed.sql >/dev/null
  echo "== $size terms (big user: $big, huge user: $huge), seeded in $(( $(date +%s) - start )) s"
  FERRY_DATABASE_URL=$APP FERRY_DATABASE_MIGRATION_URL=$OWNER FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=warning \
    FERRY_MEMCACHED_SERVERS=$FERRY_MEMCACHED_SERVERS "$BIN" serve >/dev/null 2>&1 &
  SERVER_PID=$!
  for _ in $(seq 200); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
  cursor=$(python3 bench/scale/measure.py "http://127.0.0.1:$PORT" cursor)
  psql -X -q -v ON_ERROR_STOP=1 "$OWNER" -f bench/scale/access.sql >/dev/null
  python3 bench/scale/measure.py "http://127.0.0.1:$PORT" run "$cursor" "$size" "$OWNER" | tee -a "$OUT/results.jsonl"
  if [ "$size" = "$LARGEST" ]; then
    su_psql -d "$DB" -c "ALTER DATABASE $DB SET session_preload_libraries = 'auto_explain'" \
      -c "ALTER DATABASE $DB SET auto_explain.log_min_duration = 0" -c "ALTER DATABASE $DB SET auto_explain.log_analyze = on" \
      -c "ALTER DATABASE $DB SET auto_explain.log_format = json"
    kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
    FERRY_DATABASE_URL=$APP FERRY_DATABASE_MIGRATION_URL=$OWNER FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=warning \
      FERRY_MEMCACHED_SERVERS=$FERRY_MEMCACHED_SERVERS "$BIN" serve >/dev/null 2>&1 &
    SERVER_PID=$!
    for _ in $(seq 200); do curl -fs "http://127.0.0.1:$PORT/healthz" >/dev/null && break; sleep 0.1; done
    LOG=$LOCAL/run/postgres.log
    from=$(wc -l < "$LOG")
    python3 bench/scale/measure.py "http://127.0.0.1:$PORT" run "$cursor" "$size" >/dev/null
    python3 bench/scale/explain_check.py "$LOG" "$from" | tee "$OUT/explain-check.txt" || true
  fi
  kill "$SERVER_PID"; wait "$SERVER_PID" 2>/dev/null || true
  SERVER_PID=
  su_psql -d postgres -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)"
  DB=
done
python3 - "$OUT/results.jsonl" > "$OUT/results.md" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ops = [k for k, v in rows[0].items() if isinstance(v, dict)]
head = "| operation | " + " | ".join(f"p50 / p99 at {r['size']:,}" for r in rows) + " | p50 ratio, largest / smallest |"
print(head)
print("|" + "---|" * (len(rows) + 2))
for op in ops:
    cells = " | ".join(f"{r[op]['p50']:.2f} / {r[op]['p99']:.2f} ms" for r in rows)
    print(f"| {op} | {cells} | {rows[-1][op]['p50'] / rows[0][op]['p50']:.2f} |")
print()
print("Big user's snapshot: " + ", ".join(f"{r['snapshot_rows']:,} rows at {r['size']:,}" for r in rows)
      + "; the 500-row page delivered " + ", ".join(str(r['page_rows']) for r in rows) + " entries.")
for r in rows:
    if "huge_snapshot" in r:
        h = r["huge_snapshot"]
        print(f"Index page 1 of a {r['huge_snapshot_rows']:,}-row snapshot at {r['size']:,} terms: p50 {h['p50']:.1f} ms, p99 {h['p99']:.1f} ms.")
for r in rows:
    if "huge_first_feed_page" in r:
        h = r["huge_first_feed_page"]
        print(f"The huge user's first feed page from the start (500 of {r['huge_snapshot_rows']:,} terms in 1,000 sets) at {r['size']:,} terms: p50 {h['p50']:.1f} ms, p99 {h['p99']:.1f} ms.")
print("The poll after the invisible changes follows a rewrite of " + ", ".join(
    f"{r['invisible_changes']:,} rows at {r['size']:,} ({r['invisible_rewrite_s']} s)" for r in rows if "invisible_changes" in r)
      + ": every term of other users' sets that the reader may not see.")
PY
cat "$OUT/results.md"
if python3 -c "import matplotlib" 2>/dev/null; then python3 bench/scale/plot.py "$OUT/results.jsonl" "$OUT/scale.png"; echo "plot: $OUT/scale.png"; fi

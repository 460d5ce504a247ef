#!/usr/bin/env bash
# Issue 22's cost of gzip: req/s of a 100-row Index page (GET /v1/terms?set_id=)
# under wrk, uncompressed and at each compression.level, in alternating rounds,
# with the bytes of one answer at each level. Needs the dev services.
#
#   bench/first-sync/gzip-levels.sh     (LEVELS="1 3 6 9" ROUNDS=2 DURATION=8 CONNECTIONS=8; FERRY_BIN=path skips the build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
LEVELS=${LEVELS:-"1 3 6 9"}
ROUNDS=${ROUNDS:-2}
DURATION=${DURATION:-8}
CONNECTIONS=${CONNECTIONS:-8}
command -v wrk >/dev/null || apt-get install -y -qq wrk >/dev/null
source bench/lib.sh
bench_binary
bench_database ferry_bench_gzip
echo "bench-password" | "$BIN" user add gzipper >/dev/null
psql -X -q -v ON_ERROR_STOP=1 "$FERRY_DATABASE_MIGRATION_URL" <<'SQL'
INSERT INTO app.study_sets (creator_id, title) SELECT (SELECT id FROM ferry.users WHERE name = 'gzipper'), 'set ' || s FROM generate_series(1, 100) s;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for term ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i;
ANALYZE app.study_sets, app.terms;
SQL
WORK=$(mktemp -d)
psql -X -qtA "$FERRY_DATABASE_MIGRATION_URL" -c "SELECT id FROM app.study_sets" > "$WORK/sets.txt"
TOKEN=$("$BIN" token issue gzipper | tail -n1)
trap 'bench_cleanup; rm -rf "$WORK"' EXIT
export BENCH_LUA=$ROOT/bench/api/wrk BENCH_DIR=$WORK BENCH_AUTH="Bearer $TOKEN" BENCH_PATH="/v1/terms?limit=100&set_id="
set_one=$(head -n1 "$WORK/sets.txt")
run() {  # run <label> <level> <accept-encoding>
  bench_serve FERRY_COMPRESSION_LEVEL="$2"
  local bytes
  bytes=$(curl -s -o /dev/null -w '%{size_download}' -H "Authorization: Bearer $TOKEN" ${3:+-H "Accept-Encoding: $3"} \
    "http://127.0.0.1:$PORT/v1/terms?limit=100&set_id=$set_one")
  BENCH_ACCEPT_ENCODING=$3 wrk -t2 -c"$CONNECTIONS" -d2s -s bench/api/wrk/index.lua "http://127.0.0.1:$PORT" >/dev/null
  local rps
  rps=$(BENCH_ACCEPT_ENCODING=$3 wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" -s bench/api/wrk/index.lua "http://127.0.0.1:$PORT" \
    | awk '/Requests\/sec/ {print $2}')
  echo "$1 $bytes $rps" >> "$WORK/results"
  echo "round $round: $1: $bytes bytes per page, $rps req/s"
}
for round in $(seq "$ROUNDS"); do
  run identity 1 ""
  for level in $LEVELS; do run "gzip-$level" "$level" gzip; done
done
echo
echo "| answer | bytes of a 100-row page | req/s (mean of $ROUNDS rounds) | req/s against uncompressed |"
echo "|---|---|---|---|"
awk '{ n[$1]++; r[$1] += $3; b[$1] = $2; if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
     END { base = r["identity"] / n["identity"];
           for (i = 1; i <= k; i++) { m = order[i]; printf "| %s | %d | %.0f | %.2f |\n", m, b[m], r[m] / n[m], (r[m] / n[m]) / base } }' "$WORK/results"

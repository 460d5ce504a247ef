#!/usr/bin/env bash
# bench/feed/patch-ab.sh: PATCH of one term at 8 writers (wrk -t2 -c8, write.lua), two
# release builds of Ferry alternating, beside `pgbench -b simple-update` (-c 8 -j 2) of
# the same minutes (issue 47's bar: PATCH ÷ simple-update ≥ 0.58).
#
#   BENCH_FERRY_A=<release ferry> BENCH_FERRY_B=<release ferry> bench/feed/patch-ab.sh
#
# Build both sides the same way: `deploy/build.sh DIR` links the Swift runtime statically, a
# plain `swift build -c release` does not: one tip measured 0.948 of the other's PATCH/s
# (bench/feed/README.md, stop 27), more than most changes move it.
# Each build migrates and serves a database of its own (bench/api/api.sh's data: 100,000
# terms in 1,000 sets of one user), so each runs its own functions and triggers; both
# servers run throughout, one measured at a time, the order alternating each round. Live
# wake-ups on (as deployed). BENCH_ROUNDS rounds (default 4), BENCH_DURATION a figure
# (default 10s). CPU is µs a request: the server's process + every postgres process (both
# servers' backends, the idle one's included). The rest of the environment is api.sh's.
# BENCH_APP_DIR_A, BENCH_APP_DIR_B: the app's migrations of each side (default the study
# example's), e.g. the same build over the example before and after a schema change.
# BENCH_PSQL_MIGRATIONS_A, BENCH_PSQL_MIGRATIONS_B: for a build from before Ferry's core
# track (27 Nov), the migrations/ directory of its checkout, applied with psql instead of
# `ferry migrate` (e.g. 26 Nov's build, whose 0.58 is the bar). BENCH_OWNER_SQL_A,
# BENCH_OWNER_SQL_B: SQL run as the owner on that side's database after seeding, for an
# ablation (e.g. the update trigger disabled: what the bar would be without it).
source "$(dirname "${BASH_SOURCE[0]}")/../api/api.sh"

ROUNDS=${BENCH_ROUNDS:-4}
DURATION=${BENCH_DURATION:-10s}
CONNECTIONS=8
A=${BENCH_FERRY_A:?set BENCH_FERRY_A to a release ferry}
B=${BENCH_FERRY_B:?set BENCH_FERRY_B to a release ferry}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

declare -A base pid tokens
BASE_DB=$DB
for side in a b; do
  bin=$A; [ "$side" = b ] && bin=$B
  DB=${BASE_DB}_$side
  app_dir=${BENCH_APP_DIR_A:-}; [ "$side" = b ] && app_dir=${BENCH_APP_DIR_B:-}
  psql_dir=${BENCH_PSQL_MIGRATIONS_A:-}; [ "$side" = b ] && psql_dir=${BENCH_PSQL_MIGRATIONS_B:-}
  seed_ferry "$bin" "$app_dir" "$psql_dir"
  owner_sql=${BENCH_OWNER_SQL_A:-}; [ "$side" = b ] && owner_sql=${BENCH_OWNER_SQL_B:-}
  [ -z "$owner_sql" ] || psql_owner "$DB" -c "$owner_sql" >/dev/null
  cp "$WORK/ids.txt" "$WORK/ids.$side"
  port=$PORT; [ "$side" = b ] && port=$((PORT + 1))
  serve_ferry "$bin" "$port" "$WORK/ferry-$side.log"
  pid[$side]=$SERVED_PID
  base[$side]=http://127.0.0.1:$port
  tokens[$side]=$TOKEN
  wait_http "${base[$side]}/healthz"
done
# The api.sh cleanup drops $DB only.
trap 'for s in a b; do psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS ${BASE_DB}_$s WITH (FORCE)" >/dev/null 2>&1 || true; done; DB=$BASE_DB; cleanup' EXIT
calibration_setup
use() {  # side: points wrk_run at that server
  BASE=${base[$1]} SERVER_PIDS=("${pid[$1]}")
  export BENCH_AUTH="Bearer ${tokens[$1]}" BENCH_KINTO=0
  cp "$WORK/ids.$1" "$WORK/ids.txt"
}
for side in a b; do
  use "$side"
  BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk -t2 -c8 -d3s -s "$ROOT/bench/api/wrk/write.lua" "$BASE" >/dev/null
done
echo "bench/feed/patch-ab.sh at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "an unknown commit"), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "A: $A${BENCH_APP_DIR_A:+, app migrations of $BENCH_APP_DIR_A}${BENCH_PSQL_MIGRATIONS_A:+, migrated with psql from $BENCH_PSQL_MIGRATIONS_A}${BENCH_OWNER_SQL_A:+, then: $BENCH_OWNER_SQL_A}"
echo "B: $B${BENCH_APP_DIR_B:+, app migrations of $BENCH_APP_DIR_B}${BENCH_PSQL_MIGRATIONS_B:+, migrated with psql from $BENCH_PSQL_MIGRATIONS_B}${BENCH_OWNER_SQL_B:+, then: $BENCH_OWNER_SQL_B}"
echo
echo "| round | simple-update tps | PATCH/s A | PATCH/s B | B ÷ A | A ÷ simple-update | B ÷ simple-update | CPU µs a PATCH A | B |"
echo "|---|---|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  : > "$WORK/results.r$round"
  u=$(simple_update_tps)
  order="a b"; [ $((round % 2)) -eq 0 ] && order="b a"
  for side in $order; do
    use "$side"
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run "patch-$side" write.lua "r$round" 2>/dev/null
  done
  get() { awk -v n="$1" '$1==n {printf "%.0f", $2}' "$WORK/results.r$round"; }
  cpu() { awk -v n="$1" '$1==n {print $5}' "$WORK/results.r$round"; }
  errors=$(grep -c "_errors" "$WORK/results.r$round" || true)
  [ "$errors" = 0 ] || echo "WARNING: round $round had error answers: $(grep _errors "$WORK/results.r$round" | tr '\n' ' ')" >&2
  echo "| $round | $u | $(get patch-a) | $(get patch-b) | $(ratio "$(get patch-b)" "$(get patch-a)") | $(ratio "$(get patch-a)" "$u") | $(ratio "$(get patch-b)" "$u") | $(cpu patch-a) | $(cpu patch-b) |"
  echo "$u $(get patch-a) $(get patch-b)" >> "$WORK/totals"
done
awk '{ u += $1; a += $2; b += $3 } END { printf "\ntotals: simple-update %d, A %d, B %d: B ÷ A %.3f, A ÷ simple-update %.3f, B ÷ simple-update %.3f\n", u, a, b, b / a, a / u, b / u }' "$WORK/totals"
calibration_drop >/dev/null

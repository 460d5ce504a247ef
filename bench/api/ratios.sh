#!/usr/bin/env bash
# Issue 22's ratios, each against its peer measured in the same run, in
# alternating rounds (the 2-core machine's speed moves with its neighbours,
# so a figure only means something beside its peer's of the same minutes):
#
#   bench/api/ratios.sh            all of the below
#   bench/api/ratios.sh healthz    GET /healthz, Ferry against Hummingbird 2.28.1
#                              (wrk -t2 -c64), BENCH_ROUNDS rounds, the order
#                              alternating; needs BENCH_HB_PEER_BIN
#   bench/api/ratios.sh pgbench    at 8 clients each: GET by id against
#                              `pgbench -S -M prepared`, PATCH, bulk POST of 100
#                              and a batch of 10 PATCHes against
#                              `pgbench -b simple-update`, and GET with the
#                              access log on (info, the default) and off (warning)
#   bench/api/ratios.sh latency    GET by id at 1, 4, 16, 64, 256 and 512
#                              connections, Ferry then Kinto (BENCH_KINTO_VENV,
#                              as bench/api/api.sh); p50 and p99 into
#                              bench/api/latency.txt and bench/api/latency.png
#
# The data, the servers' settings and the environment are bench/api/api.sh's (100,000
# terms in 1,000 sets; Ferry with pool and workers at twice the cores; PostgreSQL
# over its Unix socket). Also: BENCH_ROUNDS (default 3), BENCH_DURATION (default
# 10s), BENCH_HB_PEER_BIN (a Hummingbird server answering GET /healthz, started with
# its port as its only argument; built outside this repository, see bench/api/README.md).
source "$(dirname "${BASH_SOURCE[0]}")/api.sh"

ROUNDS=${BENCH_ROUNDS:-3}
PART=${1:-all}

# rate_of "wrk output" -> its req/s
rate_of() { awk '/Requests\/sec/ {printf "%.0f", $2}' <<<"$1"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

healthz_part() {
  local peer=${BENCH_HB_PEER_BIN:?set BENCH_HB_PEER_BIN to a Hummingbird 2.28.1 /healthz server}
  local peer_port=$((PORT + 2)) round order name p out ferry hb
  "$peer" "$peer_port" >"$WORK/peer.log" 2>&1 &
  PIDS+=($!)
  wait_http "http://127.0.0.1:$peer_port/healthz"
  echo
  echo "GET /healthz, wrk -t2 -c64 -d$DURATION, rounds alternating which server goes first:"
  echo
  echo "| round | Ferry req/s | Hummingbird 2.28.1 req/s | Ferry ÷ Hummingbird |"
  echo "|---|---|---|---|"
  for round in $(seq 1 "$ROUNDS"); do
    order="ferry hb"; [ $((round % 2)) -eq 0 ] && order="hb ferry"
    for name in $order; do
      p=$PORT; [ "$name" = hb ] && p=$peer_port
      out=$(wrk -t2 -c64 -d"$DURATION" "http://127.0.0.1:$p/healthz")
      declare "$name=$(rate_of "$out")"
    done
    echo "| $round | $ferry | $hb | $(ratio "$ferry" "$hb") |"
  done
}

# A second Ferry on the same database with the access log off (logging.level warning).
start_quiet_ferry() {
  local bin=${BENCH_FERRY_BIN:-$ROOT/.build/release/ferry}
  QUIET_PORT=$((PORT + 1))
  FERRY_DATABASE_URL="$APP/$DB" FERRY_LISTEN_PORT=$QUIET_PORT FERRY_LISTEN_HOST=127.0.0.1 \
    FERRY_MEMCACHED_SERVERS=${FERRY_MEMCACHED_SERVERS:-127.0.0.1:11299} FERRY_LOGGING_LEVEL=warning \
    FERRY_DATABASE_POOL_SIZE=${FERRY_DATABASE_POOL_SIZE:-$((2 * $(nproc)))} \
    FERRY_LISTEN_WORKER_THREADS=${FERRY_LISTEN_WORKER_THREADS:-$((2 * $(nproc)))} \
    "$bin" serve >"$WORK/ferry-quiet.log" 2>&1 &
  PIDS+=($!)
  QUIET_PID=$!
  wait_http "http://127.0.0.1:$QUIET_PORT/healthz"
}

pgbench_part() {
  local round s u get quiet patch post batch first second
  CONNECTIONS=8
  calibration_setup
  start_quiet_ferry
  local loud_base=$BASE loud_pids=("${SERVER_PIDS[@]}")
  BASE=http://127.0.0.1:$QUIET_PORT warm_up /v1/terms/
  BASE=$loud_base
  echo
  echo "8 clients each (wrk -t2 -c8, pgbench -c 8 -j 2), $DURATION a figure; CPU is µs per request, Ferry + PostgreSQL:"
  echo
  echo "| round | pgbench -S -M prepared tps | GET/s | GET ÷ pgbench -S | GET/s, access log off | log's cost | pgbench simple-update tps | PATCH/s | PATCH ÷ simple-update | POST of 100/s (rows/s) | batch of 10/s (rows/s) | CPU GET / PATCH |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  for round in $(seq 1 "$ROUNDS"); do
    : > "$WORK/results.r$round"
    s=$(pgbench -n -S -M prepared -c 8 -j 2 -T "${DURATION%s}" "$OWNER/$CDB" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}')
    # The access log's cost: the same GETs at info and at warning, the order alternating.
    first=loud; second=quiet; [ $((round % 2)) -eq 0 ] && { first=quiet; second=loud; }
    for name in $first $second; do
      if [ "$name" = quiet ]; then BASE=http://127.0.0.1:$QUIET_PORT SERVER_PIDS=("$QUIET_PID"); else BASE=$loud_base SERVER_PIDS=("${loud_pids[@]}"); fi
      BENCH_PATH_PREFIX=/v1/terms/ wrk_run "get-$name" get.lua "r$round" 2>/dev/null
    done
    BASE=$loud_base SERVER_PIDS=("${loud_pids[@]}")
    u=$(simple_update_tps)
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run patch write.lua "r$round" 2>/dev/null
    BENCH_PATH=/v1/terms wrk_run post100 post100.lua "r$round" 2>/dev/null
    wrk_run batch10 batch10.lua "r$round" 2>/dev/null
    get=$(awk '$1=="get-loud" {printf "%.0f", $2}' "$WORK/results.r$round")
    quiet=$(awk '$1=="get-quiet" {printf "%.0f", $2}' "$WORK/results.r$round")
    patch=$(awk '$1=="patch" {printf "%.0f", $2}' "$WORK/results.r$round")
    post=$(awk '$1=="post100" {printf "%.0f", $2}' "$WORK/results.r$round")
    batch=$(awk '$1=="batch10" {printf "%.0f", $2}' "$WORK/results.r$round")
    local errors
    errors=$(grep -c "_errors" "$WORK/results.r$round" || true)
    [ "$errors" = 0 ] || echo "WARNING: round $round had error answers: $(grep _errors "$WORK/results.r$round" | tr '\n' ' ')" >&2
    echo "| $round | $s | $get | $(ratio "$get" "$s") | $quiet | $(awk -v a="$get" -v b="$quiet" 'BEGIN { if (b > 0) printf "%.1f %%", 100 * (b - a) / b; else print "-" }') | $u | $patch | $(ratio "$patch" "$u") | $post ($((post * 100))) | $batch ($((batch * 10))) | $(awk '$1=="get-loud" {print $5}' "$WORK/results.r$round") / $(awk '$1=="patch" {print $5}' "$WORK/results.r$round") |"
  done
  calibration_drop >/dev/null
}

latency_part() {
  local levels="1 4 16 64 256 512" c t out server
  local data=$ROOT/bench/api/latency.txt
  echo "# bench/api/ratios.sh latency, $(date -u +%Y-%m-%dT%H:%MZ), commit $(git -C "$ROOT" rev-parse --short HEAD): server connections req/s p50 p99" > "$data"
  measure_levels() {  # server prefix
    for c in $levels; do
      t=2; [ "$c" -lt 2 ] && t=1
      out=$(BENCH_PATH_PREFIX=$2 wrk -t$t -c"$c" -d"$DURATION" --timeout "$TIMEOUT" --latency -s "$ROOT/bench/api/wrk/get.lua" "$BASE")
      if grep -qE "Non-2xx|Socket errors" <<<"$out"; then echo "WARNING: $1 at $c connections: $(grep -E "Non-2xx|Socket errors" <<<"$out")" >&2; fi
      echo "$1 $c $(rate_of "$out") $(awk '/ 50%/ {print $2}' <<<"$out") $(awk '/ 99%/ {print $2}' <<<"$out")" >> "$data"
    done
  }
  measure_levels ferry /v1/terms/
  if [ -n "${BENCH_KINTO_VENV:-}" ]; then
    start_kinto
    measure_levels kinto "$KINTO_PREFIX"
  else
    echo "latency: BENCH_KINTO_VENV is not set, Kinto left out" >&2
  fi
  echo
  echo "GET by id, wrk -t2 -c<connections> -d$DURATION --latency (bench/api/latency.txt):"
  echo
  echo "| connections | Ferry req/s | Ferry p50 | Ferry p99 | Kinto req/s | Kinto p50 | Kinto p99 |"
  echo "|---|---|---|---|---|---|---|"
  row() { awk -v s="$1" -v c="$2" '$1==s && $2==c {print $3 " | " $4 " | " $5; found=1} END {if (!found) print "- | - | -"}' "$data"; }
  for c in $levels; do
    echo "| $c | $(row ferry "$c") | $(row kinto "$c") |"
  done
  python3 "$ROOT/bench/api/latency-plot.py" "$data" "$ROOT/bench/api/latency.png" && echo "plot: bench/api/latency.png"
}

case $PART in
  healthz|pgbench|latency|all) ;;
  *) echo "usage: $0 [all|healthz|pgbench|latency]" >&2; exit 2 ;;
esac
DURATION=${BENCH_DURATION:-10s}
start_ferry
echo "bench/api/ratios.sh $PART at $(git -C "$ROOT" rev-parse --short HEAD), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
case $PART in
  healthz) healthz_part ;;
  pgbench) pgbench_part ;;
  latency) latency_part ;;
  all) healthz_part; pgbench_part; latency_part ;;
esac

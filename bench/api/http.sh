#!/usr/bin/env bash
# HTTP throughput of `ferry serve` on GET /healthz with wrk, keep-alive and
# Connection: close, plus peak RSS. Optionally compares a peer server.
#
#   bench/api/http.sh                      # build release, start ferry serve, measure
#   FERRY_BENCH_BIN=path/to/server FERRY_BENCH_ARGS="8090" bench/api/http.sh
#   FERRY_BENCH_PEER_BIN=/tmp/hb-peer/.build/release/hbpeer bench/api/http.sh
#
# Environment:
#   FERRY_BENCH_PORT      port for Ferry (default 8090); peer uses port+1
#   FERRY_BENCH_DURATION  wrk seconds per run (default 10)
#   FERRY_BENCH_BIN       server binary to run instead of .build/release/ferry serve
#   FERRY_BENCH_ARGS      its arguments (default: the port)
#   FERRY_BENCH_PEER_BIN  a peer server started with its port as the only argument
#   FERRY_BENCH_SOAK      seconds of an extra keep-alive run after which RSS is compared
#                         with the warm RSS (default 60; 0 skips it)
#   Any FERRY_* configuration variables (database URL, ...) are passed on to ferry serve.
set -euo pipefail
cd "$(dirname "$0")/../.."

port="${FERRY_BENCH_PORT:-8090}"
duration="${FERRY_BENCH_DURATION:-10}"
command -v wrk >/dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 1; }

if [[ -z "${FERRY_BENCH_BIN:-}" ]]; then
  swift build -c release --product ferry
  # ferry serve reads its tables at start, so it needs the local PostgreSQL.
  bash deploy/local.sh start >/dev/null
  eval "$(bash deploy/local.sh env)"
  server=(.build/release/ferry serve)
  export FERRY_LISTEN_PORT="$port"
else
  # shellcheck disable=SC2206
  server=("$FERRY_BENCH_BIN" ${FERRY_BENCH_ARGS:-$port})
fi

wait_for() {  # port
  for _ in $(seq 1 100); do
    curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "server on port $1 did not answer /healthz" >&2
  return 1
}

measure() {  # name pid port
  local name=$1 pid=$2 p=$3
  echo "== $name keep-alive: wrk -t2 -c64 -d${duration}s --latency http://127.0.0.1:$p/healthz"
  wrk -t2 -c64 -d"${duration}s" --latency "http://127.0.0.1:$p/healthz" | grep -E "Requests/sec|50%|99%|Non-2xx|Socket errors" || true
  echo "== $name Connection: close"
  wrk -t2 -c64 -d"${duration}s" --latency -H 'Connection: close' "http://127.0.0.1:$p/healthz" | grep -E "Requests/sec|50%|99%|Non-2xx|Socket errors" || true
  echo "== $name peak RSS: $(grep VmHWM "/proc/$pid/status" | awk '{print $2, $3}')"
  local soak="${FERRY_BENCH_SOAK:-60}"
  if [[ "$soak" -gt 0 ]]; then
    local warm
    warm=$(grep VmRSS "/proc/$pid/status" | awk '{print $2}')
    wrk -t2 -c64 -d"${soak}s" "http://127.0.0.1:$p/healthz" >/dev/null
    echo "== $name RSS: warm ${warm} kB, after ${soak} s more keep-alive load $(grep VmRSS "/proc/$pid/status" | awk '{print $2}') kB"
  fi
}

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; }
trap cleanup EXIT

"${server[@]}" >/dev/null 2>&1 &
ferry_pid=$!
pids+=("$ferry_pid")
wait_for "$port"
measure ferry "$ferry_pid" "$port"
stop() {  # pid: SIGTERM (graceful), SIGKILL after 15 s
  kill "$1" 2>/dev/null || return 0
  for _ in $(seq 1 150); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  echo "pid $1 ignored SIGTERM for 15 s; killing" >&2
  kill -9 "$1" 2>/dev/null || true
}
stop "$ferry_pid"

if [[ -n "${FERRY_BENCH_PEER_BIN:-}" ]]; then
  peer_port=$((port + 1))
  "$FERRY_BENCH_PEER_BIN" "$peer_port" >/dev/null 2>&1 &
  peer_pid=$!
  pids+=("$peer_pid")
  wait_for "$peer_port"
  measure peer "$peer_pid" "$peer_port"
  stop "$peer_pid"
fi

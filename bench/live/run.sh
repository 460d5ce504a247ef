#!/usr/bin/env bash
# Issue 34's live-feed figures (bench/live/live.py says what each is): commit
# to device p50/p99 with 1, 1,000 and 10,000 waiting long polls, against a
# device polling every second; the server's memory per waiter and its idle
# CPU; fan-out of one write to every waiter of a shared set. Client and server
# on the same cores; a release build; the dev services. Never in CI.
#
#   bench/live/run.sh [N ...]     (default: 1 1000 10000; FERRY_BIN=path skips the build)
#   bench/live/run.sh fanout [N ...]
#       only the fan-out (issue 46): one write to a set N waiters wait on, as N
#       long polls of one user's token (one shared check), as N collaborators
#       with a token each on their default stream (a check each), and as the
#       same N on the set's stream (stream=set:<id>: one check's page for all,
#       StreamChecks; default N: 1000 10000)
#   bench/live/run.sh teacher [N ...]
#       only the teacher's set (issue 46): N students (default 1000), a token
#       each, follow the set's stream, first with an event stream each, then
#       with long polls re-sent after each answer, while the teacher adds 200
#       terms at 16 a second; commit to device p50 / p99 / max over every
#       student and term, and each side's CPU per answer delivered
#       (bench/live/teacher.py). BENCH_TEACHER_CLIENTS=K client processes
#       (default 4; 0: the client of stop 15, one process that reads every
#       student in one thread while the writer is another thread of it),
#       BENCH_TEACHER_TRANSPORTS="events polls" (the default; either alone),
#       BENCH_TEACHER_WRITES (200), BENCH_TEACHER_RATE (16 a second),
#       BENCH_TEACHER_PROFILE="perf record ... -p {pid}": run over the writes
#       (stopped by SIGINT)
#   bench/live/run.sh cluster [N]
#       only the fan-out past one process's descriptors (issue 46): N
#       collaborators (default 100000), a token each, on the set's stream,
#       spread over ceil(N / 14000) instances of `ferry serve` on one database
#       (BENCH_CLUSTER_INSTANCES=K: K of them; bench/live/cluster.py says why),
#       one write through the first; BENCH_CLUSTER_TIMELINE=1 adds each
#       instance's CPU and counters every 2 s
#   bench/live/run.sh idle [N ...]
#       only the server's CPU with N long polls waiting and nothing written,
#       over BENCH_IDLE_SECONDS (default 60) each (default N: 0 1000 10000)
#
# Each figure is appended to BENCH_LIVE_RESULTS (default bench/live/results.jsonl),
# labelled BENCH_LIVE_LABEL (default: FERRY_BIN, else the commit); bench/live/plot.py
# draws the latest of each from it.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
MODE=all
if [ "${1:-}" = idle ]; then MODE=idle; shift; fi
if [ "${1:-}" = fanout ]; then MODE=fanout; shift; fi
if [ "${1:-}" = teacher ]; then MODE=teacher; shift; fi
if [ "${1:-}" = cluster ]; then MODE=cluster; shift; fi
COUNTS=("$@")
if [ ${#COUNTS[@]} -eq 0 ]; then
  case $MODE in idle) COUNTS=(0 1000 10000) ;; fanout) COUNTS=(1000 10000) ;; teacher) COUNTS=(1000) ;; cluster) COUNTS=(100000) ;; *) COUNTS=(1 1000 10000) ;; esac
fi
MAX=$(printf '%s\n' "${COUNTS[@]}" | sort -n | tail -n1)
ulimit -n "$(ulimit -Hn)"  # client and server each hold one descriptor per waiter
source bench/lib.sh
bench_binary
bench_database ferry_bench_live
bench_users writer reader bystander
# Instances of the cluster mode each hold PER waiters (bench/live/cluster.py).
INSTANCES=1
if [ "$MODE" = cluster ]; then INSTANCES=${BENCH_CLUSTER_INSTANCES:-$(((MAX + 13999) / 14000))}; MAX=$(((MAX + INSTANCES - 1) / INSTANCES)); fi
# Every waiter may be one user's (the limits per user and per instance raised
# for it), and held up to 600 s, longer than a phase of the run.
bench_serve FERRY_LIMITS_MAX_CONNECTIONS=$((MAX + 1000)) FERRY_LIMITS_IDLE_TIMEOUT_SECONDS=600 \
  FERRY_LIVE_MAX_WAITERS=$((MAX + 100)) FERRY_LIVE_MAX_WAITERS_PER_USER=$((MAX + 100)) FERRY_LIVE_MAX_WAIT_SECONDS=600
bench_shared_set "live bench"
export BENCH_LIVE_RESULTS=${BENCH_LIVE_RESULTS:-$ROOT/bench/live/results.jsonl}
if [ -n "${FERRY_BIN:-}" ]; then DEFAULT_LABEL=$FERRY_BIN; else DEFAULT_LABEL=$(git rev-parse --short HEAD); fi
export BENCH_LIVE_LABEL=${BENCH_LIVE_LABEL:-$DEFAULT_LABEL}
echo "ferry serve ($BIN) on 127.0.0.1:$PORT, pid $SERVER; $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$MODE" = fanout ] || [ "$MODE" = teacher ] || [ "$MODE" = cluster ]; then
  if [ "$MODE" = cluster ]; then MAX=${COUNTS[0]}; fi
  # MAX collaborators of the set, each with a token of its own, made in SQL
  # (one password hash for all: a bcrypt each would take minutes); their
  # tokens are fanout-bench-token-<i>, which live.py sends.
  psql -X -q "$FERRY_DATABASE_MIGRATION_URL" -v ON_ERROR_STOP=1 <<SQL >/dev/null
WITH hash AS (SELECT crypt('bench-password', gen_salt('bf', 4)) AS h),
     made AS (INSERT INTO ferry.users (name, password_hash)
              SELECT 'fan-' || i, (SELECT h FROM hash) FROM generate_series(1, $MAX) i RETURNING id, name),
     tokens AS (SELECT ferry.issue_token(id, sha256(convert_to('fanout-bench-token-' || substr(name, 5), 'UTF8')), 86400) FROM made)
INSERT INTO app.set_collaborators (set_id, user_id)
SELECT '$SET', id FROM made WHERE (SELECT count(*) FROM tokens) > 0;
SQL
  if [ "$MODE" = cluster ]; then
    # The other instances: the same settings, pool and all, on ports of their own.
    PORTS=$PORT PIDS=$SERVER
    for _ in $(seq 2 "$INSTANCES"); do
      port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
      env FERRY_LISTEN_PORT="$port" FERRY_LOGGING_LEVEL=warning FERRY_DATABASE_POOL_SIZE=4 \
        FERRY_LIMITS_MAX_CONNECTIONS=$((${COUNTS[0]} / INSTANCES + 1000)) FERRY_LIMITS_IDLE_TIMEOUT_SECONDS=600 \
        FERRY_LIVE_MAX_WAITERS=$((${COUNTS[0]} / INSTANCES + 100)) FERRY_LIVE_MAX_WAITERS_PER_USER=100 \
        FERRY_LIVE_MAX_WAIT_SECONDS=600 "$BIN" serve >/dev/null 2>&1 &
      PIDS=$PIDS,$! PORTS=$PORTS,$port
      EXTRA="${EXTRA:-} $!"
    done
    trap 'kill ${EXTRA:-} 2>/dev/null || true; bench_cleanup' EXIT
    for p in ${PORTS//,/ }; do
      for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$p/healthz" && break; sleep 0.1; done
    done
    python3 bench/live/cluster.py "$PORTS" "$PIDS" "$WRITER" "$SET" "${COUNTS[0]}"
  elif [ "$MODE" = teacher ]; then
    python3 bench/live/live.py teacher "$PORT" "$SERVER" "$WRITER" "$SET" "${COUNTS[@]}"
  else
    python3 bench/live/live.py fanout "$PORT" "$SERVER" "$WRITER" "$READER" "$SET" "${COUNTS[@]}"
  fi
  exit 0
fi
if [ "$MODE" = idle ]; then
  python3 bench/live/live.py idle "$PORT" "$SERVER" "$BYSTANDER" "${BENCH_IDLE_SECONDS:-60}" "${COUNTS[@]}"
  exit 0
fi
python3 bench/live/live.py "$PORT" "$SERVER" "$WRITER" "$READER" "$BYSTANDER" "$SET" "${COUNTS[@]}"

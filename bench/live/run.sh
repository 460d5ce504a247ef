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
COUNTS=("$@")
if [ ${#COUNTS[@]} -eq 0 ]; then
  case $MODE in idle) COUNTS=(0 1000 10000) ;; fanout) COUNTS=(1000 10000) ;; *) COUNTS=(1 1000 10000) ;; esac
fi
MAX=$(printf '%s\n' "${COUNTS[@]}" | sort -n | tail -n1)
ulimit -n "$(ulimit -Hn)"  # client and server each hold one descriptor per waiter
source bench/lib.sh
bench_binary
bench_database ferry_bench_live
bench_users writer reader bystander
# Every waiter may be one user's (the limits per user and per instance raised
# for it), and held up to 600 s, longer than a phase of the run.
bench_serve FERRY_LIMITS_MAX_CONNECTIONS=$((MAX + 1000)) FERRY_LIMITS_IDLE_TIMEOUT_SECONDS=600 \
  FERRY_LIVE_MAX_WAITERS=$((MAX + 100)) FERRY_LIVE_MAX_WAITERS_PER_USER=$((MAX + 100)) FERRY_LIVE_MAX_WAIT_SECONDS=600
bench_shared_set "live bench"
export BENCH_LIVE_RESULTS=${BENCH_LIVE_RESULTS:-$ROOT/bench/live/results.jsonl}
if [ -n "${FERRY_BIN:-}" ]; then DEFAULT_LABEL=$FERRY_BIN; else DEFAULT_LABEL=$(git rev-parse --short HEAD); fi
export BENCH_LIVE_LABEL=${BENCH_LIVE_LABEL:-$DEFAULT_LABEL}
echo "ferry serve ($BIN) on 127.0.0.1:$PORT, pid $SERVER; $(nproc) cores; $(date -u +%FT%TZ); load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$MODE" = fanout ]; then
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
  python3 bench/live/live.py fanout "$PORT" "$SERVER" "$WRITER" "$READER" "$SET" "${COUNTS[@]}"
  exit 0
fi
if [ "$MODE" = idle ]; then
  python3 bench/live/live.py idle "$PORT" "$SERVER" "$BYSTANDER" "${BENCH_IDLE_SECONDS:-60}" "${COUNTS[@]}"
  exit 0
fi
python3 bench/live/live.py "$PORT" "$SERVER" "$WRITER" "$READER" "$BYSTANDER" "$SET" "${COUNTS[@]}"

#!/usr/bin/env bash
# Where a PATCH's time in PostgreSQL goes, function by function (issue 47):
# PATCH of one term (wrk write.lua) at 8 writers for BENCH_DURATION, with
# PostgreSQL's track_functions on for the run, then pg_stat_user_functions
# (each trigger function's calls, total and self time, and µs a call) and
# which tables were written (HOT updates or not). Wall time inside each
# function, not CPU: with 8 writers on 2 cores it includes waiting for a core.
#
#   bench/feed/trigger-time.sh
#
# The data, servers and environment are bench/api/api.sh's (release build, 100,000
# terms in 1,000 sets, BENCH_FERRY_BIN for a built binary). Needs the dev services'
# superuser over their socket (deploy/local.sh) to switch track_functions, which it
# switches back at the end.
source "$(dirname "${BASH_SOURCE[0]}")/../api/api.sh"

superuser() { psql -X -q -h "$PG_SOCKET_DIR" -p "$PG_PORT" -U postgres -d "$@"; }
CONNECTIONS=8
start_ferry
trap 'superuser postgres -c "ALTER SYSTEM RESET track_functions" -c "SELECT pg_reload_conf()" >/dev/null 2>&1; cleanup' EXIT
superuser postgres -c "ALTER SYSTEM SET track_functions = 'all'" -c "SELECT pg_reload_conf()" >/dev/null
# The reload reaches every backend at its next command: the pool's included.
sleep 1
superuser "$DB" -c "SELECT pg_stat_reset()" >/dev/null
echo "bench/feed/trigger-time.sh at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "an unknown commit"), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run patch write.lua t 2>/dev/null
awk '{printf "PATCH at 8 writers: %.0f req/s, p50 %s, p99 %s, CPU µs a request (Ferry+PostgreSQL) %s\n", $2, $3, $4, $5}' "$WORK/results.t"
# The collector flushes function counts when a backend goes idle: let it.
sleep 1
superuser "$DB" -c "
SELECT schemaname || '.' || funcname AS function, calls,
       round(total_time::numeric, 1) AS total_ms, round(self_time::numeric, 1) AS self_ms,
       round((total_time / calls * 1000)::numeric, 1) AS total_us_a_call,
       round((self_time / calls * 1000)::numeric, 1) AS self_us_a_call
  FROM pg_stat_user_functions WHERE calls > 0 ORDER BY self_time DESC"
superuser "$DB" -c "
SELECT relname, n_tup_ins, n_tup_upd, n_tup_hot_upd, n_tup_del
  FROM pg_stat_user_tables WHERE n_tup_ins + n_tup_upd + n_tup_del > 0 ORDER BY n_tup_upd + n_tup_ins DESC"

#!/usr/bin/env bash
# Issue 47: how long a commit takes to reach a waiting device while another
# transaction runs, for each kind of transaction. A device (reader) waits on a
# long poll of its default stream; the writer (a collaborator of the reader's
# set) adds a term through Ferry; the figure is the time from the POST's answer
# (its commit) to the long poll's answer. Each case first opens its
# transaction and keeps it open for BENCH_HOLD_SECONDS (default 60: issue 47
# item 3's 60 s transaction), then measures BENCH_HOLD_ROUNDS (default 3)
# commits, one at a time. Release build (FERRY_BIN for another, e.g. an
# older build to compare: its migrations are the ones it embeds).
#
#   bash bench/feed/feed-hold.sh [case ...]
#
# Cases (default: all):
#   none           nothing else runs
#   other_db       a write transaction of another database of the cluster, idle
#   unsynced       this database: a transaction that wrote only an unsynced table, idle
#   row_lock       this database: SELECT ... FOR UPDATE of a synced row (another user's), idle
#   pg_dump        pg_dump of this database, stalled on its unread output pipe
#   late_synced    this database: an unsynced write, then (half-way) a synced
#                  write of another user's row, then idle until the end
#   synced         this database: a synced write of another user's row at once, idle:
#                  the one kind that holds every feed (bounded by PostgreSQL's
#                  idle_in_transaction_session_timeout, docs/OPERATIONS.md)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
HOLD=${BENCH_HOLD_SECONDS:-60}
ROUNDS=${BENCH_HOLD_ROUNDS:-3}
CASES=("$@")
[ ${#CASES[@]} -gt 0 ] || CASES=(none other_db unsynced row_lock pg_dump late_synced synced)
source bench/lib.sh
bench_binary
bench_database ferry_bench_hold
bench_users writer reader other
bench_serve FERRY_LIVE_MAX_WAIT_SECONDS=600
bench_shared_set "hold bench"
field() { python3 -c "import json,sys; print(json.load(sys.stdin)[\"$1\"])"; }
OTHER_SET=$(bench_api POST /v1/study_sets "$OTHER" '{"title":"someone else"}' | field id)
psql -X -q "$FERRY_DATABASE_MIGRATION_URL" -c "CREATE TABLE IF NOT EXISTS public.bench_unsynced (a int)"
OWNER=$FERRY_DATABASE_MIGRATION_URL
OTHER_DB="$BENCH_OWNER_BASE/postgres"
TMPD=$(mktemp -d)
JOB=
# Ends the case's transaction: killing psql leaves its backend asleep (and its
# transaction open, its locks held) until pg_sleep returns, so the backends go too.
stop_job() {
  if [ -n "$JOB" ]; then kill "$JOB" 2>/dev/null || true; wait "$JOB" 2>/dev/null || true; fi
  JOB=
  psql -X -q -tA "$OTHER_DB" -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
                                  WHERE application_name IN ('ferry_bench_hold_job', 'pg_dump')" >/dev/null 2>&1 || true
}
trap 'stop_job; rm -rf "$TMPD"; bench_cleanup' EXIT

# Opens the case's transaction in the background, for HOLD seconds.
start_case() {
  local sql url=$OWNER
  case $1 in
    none) return 0 ;;
    other_db) url=$OTHER_DB sql="BEGIN; CREATE TEMP TABLE elsewhere (a int); SELECT pg_sleep($HOLD); COMMIT;" ;;
    unsynced) sql="BEGIN; INSERT INTO public.bench_unsynced VALUES (1); SELECT pg_sleep($HOLD); COMMIT;" ;;
    row_lock) sql="BEGIN; SELECT 1 FROM app.study_sets WHERE id = '$OTHER_SET' FOR UPDATE; SELECT pg_sleep($HOLD); COMMIT;" ;;
    late_synced) sql="BEGIN; INSERT INTO public.bench_unsynced VALUES (1); SELECT pg_sleep(1); UPDATE app.study_sets SET title = title WHERE id = '$OTHER_SET'; SELECT pg_sleep($HOLD); COMMIT;" ;;
    synced) sql="BEGIN; UPDATE app.study_sets SET title = title WHERE id = '$OTHER_SET'; SELECT pg_sleep($HOLD); COMMIT;" ;;
    pg_dump)
      # Its output (well over a pipe's 64 KiB) is read only after HOLD seconds.
      (pg_dump --dbname "$OWNER" 2>/dev/null | (sleep "$HOLD"; cat >/dev/null)) &
      JOB=$!
      return 0 ;;
  esac
  PGAPPNAME=ferry_bench_hold_job psql -X -q "$url" -c "$sql" >/dev/null 2>&1 &
  JOB=$!
}

waiters() { curl -fsS "http://127.0.0.1:$PORT/metrics" | awk '$1 == "ferry_live_waiters" {print $2}'; }

# One commit's delay to the waiting reader, in ms.
one_round() {
  local cursor
  cursor=$(bench_api GET "/v1/changes?since=now" "$READER" | field cursor)
  ( curl -fsS -o /dev/null "http://127.0.0.1:$PORT/v1/changes?since=$cursor&wait=$((HOLD + 60))" \
      -H "Authorization: Bearer $READER"; date +%s.%N >"$TMPD/answered" ) &
  local poll=$!
  for _ in $(seq 200); do [ "$(waiters)" = 1 ] && break; sleep 0.02; done
  bench_api POST /v1/terms "$WRITER" "{\"set_id\":\"$SET\",\"word\":\"w\",\"definition\":\"d\"}" >/dev/null
  local committed; committed=$(date +%s.%N)
  wait $poll
  python3 -c "print(round((float('$(cat "$TMPD/answered")') - float('$committed')) * 1000, 1))"
}

echo "ferry ($BIN, $("$BIN" --version 2>/dev/null || echo '?')), hold ${HOLD} s, $ROUNDS rounds a case, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${CASES[@]}"; do
  start_case "$c"
  sleep 2  # the transaction is open (and late_synced has written its synced row)
  delays=()
  started=$(date +%s)
  for _ in $(seq "$ROUNDS"); do delays+=("$(one_round)"); done
  echo "$c: commit to device ${delays[*]} ms (transaction opened $(( $(date +%s) - started + 2 )) s before the last answer)"
  stop_job
done

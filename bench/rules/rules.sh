#!/usr/bin/env bash
# Issue 33: a table set up by the declarative sync rules costs what the same table
# set up by hand-written SQL costs, per GET by id, PATCH and changes page, at
# 100,000 rows. Not in CI.
#
#   bench/rules/rules.sh            (BENCH_ROUNDS rounds, default 3)
#
# Two databases seeded alike by bench/api/api.sh's seed (100,000 terms in 1,000 sets,
# one user): "hand" is migrated with examples/study/migrations but 0017, with the study
# app's hand-written policies, SECURITY DEFINER helpers, grants and triggers;
# "rules" also gets 0017_sync_rules.sql, which replaces all of them with one sync
# rule per table. A release ferry serves each. Each round measures both, in turn,
# the order alternating, so each figure stands beside its peer's of the same
# minutes. Printed: req/s and CPU microseconds per request (ferry + every postgres
# process; the steadier figure on a shared machine), and rules ÷ hand for each.
# Also bench/api/api.sh's environment (BENCH_DURATION, BENCH_CONNECTIONS, BENCH_FERRY_BIN, ...).
source "$(dirname "${BASH_SOURCE[0]}")/../api/api.sh"

ROUNDS=${BENCH_ROUNDS:-3}
BIN=${BENCH_FERRY_BIN:-}
if [ -z "$BIN" ]; then (cd "$ROOT" && swift build -c release --product ferry >&2); BIN=$ROOT/.build/release/ferry; fi

# seed_variant NAME SKIP: bench/api/api.sh's seed, with the study app's files but SKIP (a glob).
seed_variant() {
  local name=$1 skip=$2 f
  psql_owner postgres -c "DROP DATABASE IF EXISTS ${DB}_$name WITH (FORCE)" -c "CREATE DATABASE ${DB}_$name"
  mkdir -p "$WORK/app_$name"
  for f in "$ROOT"/examples/study/migrations/*.sql; do
    # shellcheck disable=SC2053
    [[ "$(basename "$f")" == $skip ]] || cp "$f" "$WORK/app_$name/"
  done
  FERRY_DATABASE_MIGRATION_URL="$OWNER/${DB}_$name" "$BIN" migrate --dir "$WORK/app_$name" >/dev/null
  local user
  user=$(psql_owner "${DB}_$name" -At -c "SELECT ferry.create_user('bench', 'bench-password')")
  psql_owner "${DB}_$name" -c "SELECT ferry.issue_token('$user', '\\x$HASH'::bytea, 86400)" >/dev/null
  psql_owner "${DB}_$name" >/dev/null <<SQL
INSERT INTO app.study_sets (creator_id, title) SELECT '$user', 'set ' || g FROM generate_series(1, 1000) g;
INSERT INTO app.terms (set_id, word, definition, rank)
  SELECT s.id, 'word ' || g, 'definition of word ' || g, lpad(g::text, 4, '0') || 'V'
    FROM app.study_sets s, generate_series(1, 100) g;
VACUUM ANALYZE app.study_sets; VACUUM ANALYZE app.terms;
SQL
  psql_owner "${DB}_$name" -At -c "SELECT id FROM app.terms ORDER BY random() LIMIT 10000" > "$WORK/ids_$name.txt"
}

# serve_variant NAME PORT: a ferry on that database, warmed up; its pid in PID_<NAME>.
serve_variant() {
  FERRY_DATABASE_URL="$APP/${DB}_$1" FERRY_LISTEN_PORT=$2 FERRY_LISTEN_HOST=127.0.0.1 FERRY_LOGGING_LEVEL=warning \
    FERRY_MEMCACHED_SERVERS=${FERRY_MEMCACHED_SERVERS:-127.0.0.1:11299} \
    FERRY_DATABASE_POOL_SIZE=${FERRY_DATABASE_POOL_SIZE:-$((2 * $(nproc)))} \
    FERRY_LISTEN_WORKER_THREADS=${FERRY_LISTEN_WORKER_THREADS:-$((2 * $(nproc)))} \
    "$BIN" serve >"$WORK/ferry_$1.log" 2>&1 &
  PIDS+=($!)
  declare -g "PID_$1=$!"
  wait_http "http://127.0.0.1:$2/healthz"
}

TOKEN=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
HASH=$(printf %s "$TOKEN" | sha256sum | cut -d' ' -f1)
export BENCH_AUTH="Bearer $TOKEN" BENCH_KINTO=0
trap 'cleanup; psql -X -q "$OWNER/postgres" -c "DROP DATABASE IF EXISTS ${DB}_hand WITH (FORCE)" -c "DROP DATABASE IF EXISTS ${DB}_rules WITH (FORCE)" >/dev/null 2>&1 || true' EXIT
seed_variant hand '*_sync_rules.sql'
seed_variant rules '-'
rules=$(psql_owner "${DB}_rules" -At -c "SELECT count(*) FROM ferry.sync_rules")
hand=$(psql_owner "${DB}_hand" -At -c "SELECT count(*) FROM ferry.sync_rules")
echo "sync rules: hand $hand, rules $rules" >&2
[ "$hand" = 0 ] && [ "$rules" = 5 ] || { echo "bench/rules/rules.sh: the variants are not what they claim" >&2; exit 1; }
serve_variant hand $((PORT + 10))
serve_variant rules $((PORT + 11))

measure() {  # measure VARIANT ROUND
  local variant=$1 port pid
  port=$((PORT + 10)); [ "$variant" = rules ] && port=$((PORT + 11))
  pid=PID_$variant
  BASE=http://127.0.0.1:$port SERVER_PIDS=("${!pid}")
  cp "$WORK/ids_$variant.txt" "$WORK/ids.txt"
  BENCH_PATH_PREFIX=/v1/terms/ wrk_run "get.$variant" get.lua "$2"
  BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run "patch.$variant" write.lua "$2"
  BENCH_PATH="/v1/changes?limit=100" wrk_run "changes.$variant" path.lua "$2"
}

for variant in hand rules; do
  port=$((PORT + 10)); [ "$variant" = rules ] && port=$((PORT + 11))
  cp "$WORK/ids_$variant.txt" "$WORK/ids.txt"
  BASE=http://127.0.0.1:$port warm_up /v1/terms/
done
for round in $(seq 1 "$ROUNDS"); do
  order="hand rules"; [ $((round % 2)) -eq 0 ] && order="rules hand"
  for variant in $order; do measure "$variant" "$round"; done
done

echo
echo "100,000 terms in 1,000 sets, wrk -t$THREADS -c$CONNECTIONS -d$DURATION per figure; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "CPU: microseconds per request, ferry + every postgres process."
echo
echo "| round | operation | hand req/s | rules req/s | rules ÷ hand | hand CPU | rules CPU |"
echo "|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  for op in get patch changes; do
    read -r _ hr _ _ hc < <(awk -v op="$op.hand" '$1==op' "$WORK/results.$round")
    read -r _ rr _ _ rc < <(awk -v op="$op.rules" '$1==op' "$WORK/results.$round")
    echo "| $round | $op | $hr | $rr | $(awk -v a="${rr%%(*}" -v b="${hr%%(*}" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }') | $hc | $rc |"
  done
done

#!/usr/bin/env bash
# Measures one Ferry-shaped request (BEGIN; set_config; SELECT; COMMIT) through FerryPostgres:
# four separate round trips versus one pipelined round trip, unnamed versus prepared
# statements, single connection and pooled. Then pgbench runs the same transaction as a
# reference. Needs FERRY_TEST_OWNER_URL (and FERRY_TEST_PG_BIN for pgbench).
#
#   bench/pg-roundtrip/pg-roundtrip.sh                 # defaults: 5000 requests, 4 threads
#   BENCH_ITERATIONS=20000 BENCH_THREADS=8 bench/pg-roundtrip/pg-roundtrip.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
: "${FERRY_TEST_OWNER_URL:?FERRY_TEST_OWNER_URL is not set (see deploy/test.sh)}"

out="$(mktemp -d /tmp/ferry-pg-bench-XXXXXX)"
trap 'rm -rf "$out"' EXIT

# Compile the module's sources and the harness as one optimised executable; the CLibPQ
# module map is found through -I.
swiftc -O -swift-version 6 -module-name PgRoundtrip -I Sources/CLibPQ -Xcc -I"$(pg_config --includedir)" -lpq \
    Sources/FerryPostgres/*.swift bench/pg-roundtrip/main.swift -o "$out/pg-roundtrip"
"$out/pg-roundtrip"

pgbench="${FERRY_TEST_PG_BIN:-/usr/lib/postgresql/15/bin}/pgbench"
if [[ -x "$pgbench" ]]; then
    threads="${BENCH_THREADS:-4}"
    cat > "$out/separate.sql" <<'SQL'
\set id random(1, 1000000)
BEGIN;
SELECT set_config('ferry.user_id', 'user-' || :id, true);
SELECT :id::int AS id, current_setting('ferry.user_id') AS who;
COMMIT;
SQL
    { echo '\set id random(1, 1000000)'; echo '\startpipeline'; sed -n '2,5p' "$out/separate.sql"; echo '\endpipeline'; } > "$out/pipeline.sql"
    for mode in extended prepared; do
        for script in separate pipeline; do
            for clients in 1 "$threads"; do
                tps=$("$pgbench" -n -M "$mode" -c "$clients" -j "$clients" -T 5 -f "$out/$script.sql" "$FERRY_TEST_OWNER_URL" 2>/dev/null \
                    | sed -n 's/^tps = \([0-9.]*\).*/\1/p')
                printf 'pgbench %-9s %-9s %2s client(s) %9.0f requests/s\n' "$mode" "$script" "$clients" "$tps"
            done
        done
    done
fi

#!/usr/bin/env bash
# Issue 21's faults, long forms. Each fault is a test of the normal suite
# (Tests/FerryTests/Faults, PostgresRestartTests, PagingOutageTests,
# FileDescriptorExhaustionTests); this runs them longer or more often and
# prints one PASS/FAIL line per run with the figures the test printed:
#
#   kill-9            ROUNDS kill -9 / restart cycles under 8 writers (20)
#   postgres-restart  REPEAT restarts of a private cluster under load (5)
#   memcached-restart REPEAT restarts of a private memcached under paging load (5)
#   disk-full         REPEAT fills of a tmpfs under a private cluster (5; root only)
#   fd-exhaustion     new connections for FD_SECONDS under ulimit -n 64 (30)
#
#   bench/faults/run.sh [kill-9|postgres-restart|memcached-restart|disk-full|fd-exhaustion ...]
#
# Uses the test services of the environment (FERRY_TEST_*) when set, else
# starts deploy/local.sh's. CONFIG=release builds the tests in release.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
CONFIG=${CONFIG:-debug}
ROUNDS=${ROUNDS:-20}
REPEAT=${REPEAT:-5}
FD_SECONDS=${FD_SECONDS:-30}
FAULTS=("$@")
[ ${#FAULTS[@]} -gt 0 ] || FAULTS=(kill-9 postgres-restart memcached-restart disk-full fd-exhaustion)
if [ -z "${FERRY_TEST_OWNER_URL:-}" ]; then
    bash deploy/local.sh start >/dev/null
    eval "$(bash deploy/local.sh env)"
    export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL"
    export FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
    export FERRY_TEST_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
fi
EXTRA=()
[ "$CONFIG" = release ] && EXTRA=(-Xswiftc -enable-testing)
swift build -c "$CONFIG" "${EXTRA[@]}" --build-tests >/dev/null || { echo "faults: FAIL (build)"; exit 1; }

FAILED=0
# run NAME FILTER [VAR=value ...]: one test run, one verdict line.
run() {
    local name=$1 filter=$2 out status figures
    shift 2
    out=$(env "$@" swift test -c "$CONFIG" "${EXTRA[@]}" --skip-build --filter "$filter" 2>&1)
    status=$?
    figures=$(grep -a "^fault $name: " <<<"$out" | tail -n1 | sed "s/^fault $name: //")
    if [ $status -eq 0 ] && [ -n "$figures" ]; then
        echo "$name: PASS: $figures"
    elif [ $status -eq 0 ] && grep -aq "skipped" <<<"$out"; then
        echo "$name: SKIP: $(grep -a -o 'skipped: .*' <<<"$out" | head -n1)"
    else
        echo "$name: FAIL: ${figures:-no figures}"
        grep -aE "✘|Expectation failed|↳" <<<"$out" | head -n 12 | cut -c1-400 >&2
        FAILED=1
    fi
}

for fault in "${FAULTS[@]}"; do
    case $fault in
    kill-9) run kill-9 CrashRestartTests FERRY_FAULT_ROUNDS="$ROUNDS" ;;
    postgres-restart) for _ in $(seq "$REPEAT"); do run postgres-restart PostgresRestartTests; done ;;
    memcached-restart) for _ in $(seq "$REPEAT"); do run memcached-restart PagingOutageTests/pagingLoadThroughAMemcachedRestart; done ;;
    disk-full) for _ in $(seq "$REPEAT"); do run disk-full DiskFullTests; done ;;
    fd-exhaustion) run fd-exhaustion FileDescriptorExhaustionTests FERRY_FAULT_SECONDS="$FD_SECONDS" ;;
    *) echo "unknown fault $fault" >&2; FAILED=1 ;;
    esac
done
if [ $FAILED -eq 0 ]; then echo "faults: PASS"; else echo "faults: FAIL"; fi
exit $FAILED

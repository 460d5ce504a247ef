#!/usr/bin/env bash
# ThreadSanitizer over the hand-threaded code: FerryHTTP's tests (epoll loops, workers, parked
# exchanges, the deadline queue) and FerryKit's (the engine's actor, continuous mode, the store),
# unit and integration (against a real `ferry serve`, itself built with the sanitizer).
# Its own scratch path (.build-tsan): a full sanitized build, about 10 minutes on 2 cores, so it
# is not in .ci/run; run it before each stop (docs/TESTING.md) and read its last line.
#   bash .ci/tsan.sh            # the suites above
#   bash .ci/tsan.sh Filter     # any other --filter
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
filter=${1:-'FerryHTTPTests|FerryKitUnitTests|FerryKitTests.SyncIntegrationTests'}
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL"
export FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
export FERRY_TEST_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
# halt_on_error: the first race fails the run, with its report above the last line.
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
swift build --sanitize=thread --scratch-path .build-tsan --build-tests
swift test --sanitize=thread --scratch-path .build-tsan --skip-build --filter "$filter"

#!/usr/bin/env bash
# FerryKit's benchmarks (issue 19): an initial sync of 100,000 terms (1,000 sets)
# into an empty file store, with its time, requests, bytes and the test
# process's peak RSS; and 10,000 offline edits across 1,000 rows, uploaded.
# They run as FerryKitBenchTests against a real ferry serve, client and server
# built in release (with testability, for the test bundle).
#
#   bench/ferrykit/ferrykit.sh                       100,000 terms
#   FERRYKIT_BENCH_ROWS=20000 bench/ferrykit/ferrykit.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL" FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
swift build -c release --build-tests -Xswiftc -enable-testing >/dev/null
FERRYKIT_BENCH=1 swift test -c release -Xswiftc -enable-testing --skip-build --filter FerryKitBenchTests 2>&1 \
  | grep -E '^ferrykit-bench:|✘|passed after|failed after'

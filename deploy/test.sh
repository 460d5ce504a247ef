#!/usr/bin/env bash
# Runs Ferry's whole test suite against a real, project-local PostgreSQL and
# memcached (started by deploy/local.sh, left running afterwards).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
bash deploy/local.sh install   # the test tools too (a browser, nginx, pgbouncer, tmux, ...)
bash deploy/local.sh start
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL"
export FERRY_TEST_APP_URL="$FERRY_DATABASE_URL"
export FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
export FERRY_TEST_PG_BIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
bash Tests/SQL/run.sh
swift build --build-tests
# docs/GUIDE.md's commands, as written (a few seconds).
bash Tests/Guide/run.sh
# FerryWeb (clients/web): its pure and conformance tests under Node (a second or two), then
# headless Chromium against a real `ferry serve` of this build (about a minute, 20 seeds).
bash clients/web/test.sh
bash clients/web/browser-test.sh
# A test that hangs makes the run red within minutes, naming it (deploy/test-watchdog.sh).
bash deploy/test-watchdog.sh "${FERRY_TEST_SILENCE_MINUTES:-8}" swift test --skip-build "$@"

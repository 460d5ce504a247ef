#!/usr/bin/env bash
# bench/ci/suites.sh [rounds]: the wall time of a set of suites that make a scratch
# database per test, with scratch databases copied from their template and migrated in
# place (FERRY_TEST_SCRATCH_TEMPLATE=0), alternating, `rounds` times each (default 2).
# Run from the repository root after `swift build --build-tests`, with the variables
# deploy/test.sh exports (FERRY_TEST_OWNER_URL ...). Prints one line per run: its wall
# time, the load average before and after, the test run's summary, and how many scratch
# databases a poll of pg_database every 0.3 s saw.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROUNDS=${1:-2}
FILTER='Console(Auth|Headers|JWTUser|Overview|Pages|Refusal|Rows|UserAdmin|UserView)Tests|TodoExampleTests|TodoCrossUserTests|JWTSignInTests|JWTUserLookupTests|AuthTests|ServeCommandTests|GenerateSwiftCommandTests'
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
run() {
  local label=$1 template=$2
  (while sleep 0.3; do
    psql -XAtq "$FERRY_TEST_OWNER_URL" -c \
      "SELECT datname FROM pg_database WHERE datname LIKE 'ferry\_%' AND datname NOT LIKE 'ferry\_tpl\_%'" 2>/dev/null || true
  done) > "$WORK/$label.dbs" &
  local poller=$! load1 start end
  load1=$(cut -d' ' -f1 /proc/loadavg)
  start=$(date +%s.%N)
  FERRY_TEST_SCRATCH_TEMPLATE=$template swift test --skip-build --filter "$FILTER" > "$WORK/$label.log" 2>&1 || true
  end=$(date +%s.%N)
  kill "$poller"
  echo "$label: $(echo "$end - $start" | bc | cut -d. -f1) s, load $load1 -> $(cut -d' ' -f1 /proc/loadavg);" \
    "$(grep -E 'Test run with' "$WORK/$label.log" | sed 's/\x1b\[[0-9;]*m//g');" \
    "scratch databases seen: $(sort -u "$WORK/$label.dbs" | wc -l)"
}
for round in $(seq 1 "$ROUNDS"); do
  run "in-place-$round" 0
  run "template-$round" 1
done

#!/usr/bin/env bash
# Does the simulation catch bugs? Breaks FerryKit on purpose, one patch of
# bench/soak/mutations/ at a time, runs the simulation on it, and says whether it
# failed (caught) or passed (missed); the source is restored after each.
#
#   bench/soak/mutations.sh                 100 seeds per mutation, fault rate 0.25
#   SEEDS=300 bench/soak/mutations.sh
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
SEEDS=${SEEDS:-100}
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL" FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
if ! git diff --quiet -- Sources/FerryKit; then echo "Sources/FerryKit has uncommitted changes; commit or stash them first" >&2; exit 2; fi
applied=""
restore() { if [ -n "$applied" ]; then git apply -R "$applied"; fi; }
trap restore EXIT
for patch in bench/soak/mutations/*.patch; do
  git apply "$patch"; applied=$patch
  swift build --build-tests >/dev/null
  out=$(FERRY_SIM_SEEDS=$SEEDS FERRY_SIM_FAULTS=0.25 swift test --skip-build --filter SimulationTests 2>&1 || true)
  git apply -R "$patch"; applied=""
  summary=$(grep -E '^simulation:' <<<"$out" | sed 's/^simulation: //' || true)
  kinds=$(grep -oE '(diverged|lost|stuck|silent|phantom|invented|restless|twice|local): ' <<<"$out" | sort | uniq -c | awk '{printf "%s %s ", $2, $1}' || true)
  if grep -qE 'seed [0-9]+ failed' <<<"$out"; then verdict=caught; else verdict=MISSED; fi
  echo "$(basename "$patch" .patch): $verdict ($summary) ${kinds}"
done
swift build --build-tests >/dev/null

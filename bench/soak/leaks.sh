#!/usr/bin/env bash
# What the simulation's process still holds when it ends, by whose code allocated
# it (heaptrack, Debian's package): the soak's devices grow with every request,
# and this tells FerryKit's share from Foundation's URLSession on Linux.
#
#   bench/soak/leaks.sh [SEEDS]     SEEDS seeds (default 200) of FERRY_SIM_DEVICES
#                                   devices (default 8), one ferry serve; the build is
#                                   release unless FERRY_LEAKS_CONFIGURATION=debug
#
# Prints the table of bench/soak/leaks.py; the raw profile stays in /tmp.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
command -v heaptrack >/dev/null || { echo "leaks: needs heaptrack (apt-get install heaptrack)" >&2; exit 2; }
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL" FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
configuration=${FERRY_LEAKS_CONFIGURATION:-release}
swift build -c "$configuration" --build-tests -Xswiftc -enable-testing >/dev/null
out=$(mktemp -d /tmp/ferry-leaks.XXXXXX)
FERRY_SIM_SEEDS=${1:-200} FERRY_SIM_DEVICES=${FERRY_SIM_DEVICES:-8} FERRY_SIM_RESTARTS=0 \
  heaptrack -o "$out/heaptrack" "$ROOT/.build/$configuration/FerryPackageTests.xctest" \
  --testing-library swift-testing --filter 'SimulationTests/devicesConvergeUnderFaultsForEverySeed' \
  > "$out/run.log" 2>&1 || { tail -20 "$out/run.log" >&2; exit 1; }
grep -E '^simulation' "$out/run.log" || true
heaptrack_print -f "$out"/heaptrack*.zst -l 1 -n 1000000 -s 1000000 --print-peaks 0 --print-allocators 0 \
  --print-temporary 0 > "$out/leaks.txt" 2>/dev/null
python3 "$ROOT/bench/soak/leaks.py" "$out/leaks.txt"
echo "profile: $out"

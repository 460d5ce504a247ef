#!/usr/bin/env bash
# Issue 20's long runs of the simulation (Tests/FerryKitTests/Simulation),
# client and server built in release:
#
#   bench/soak/run.sh seeds [N]   N seeds (default 10,000) of 2 to 4 devices, 30
#                                 operations each, fault rate 0.2; prints the
#                                 summary line: seeds, operations, crashes,
#                                 server restarts, faults by kind, failures
#   bench/soak/run.sh grdb [N]    N seeds (default 2,000) whose devices write as an app that
#                                 only uses GRDB (records and SQL on store.database)
#   bench/soak/run.sh live [N]    N seeds (default 2,000) whose devices run in FerryKit's
#                                 continuous mode (engine.start(): uploads, long polls and
#                                 retries by themselves), with long polls cut mid-wait, the
#                                 server restarted while they wait and its LISTEN
#                                 connection killed; quiescence calls no sync()
#   bench/soak/run.sh subs [N]    N seeds (default 2,000) on study sets that may be public
#                                 (issue 46): devices subscribe and unsubscribe at random,
#                                 with TTLs the seed's clock passes; each converges to its
#                                 default stream plus its subscribed, readable rows
#   bench/soak/run.sh livesubs [N] N seeds (default 2,000) of both at once: devices in
#                                 continuous mode subscribe and unsubscribe at random
#                                 under live's faults, so that their waits
#                                 (POST /v1/changes/wait) are cut, outlive a server
#                                 restart and a killed LISTEN connection; two seeds in
#                                 three on a server capped at 1 or 2 streams a wait
#                                 (FERRY_LIVE_MAX_WAIT_STREAMS), whose devices split them
#   bench/soak/run.sh long        8 devices for 200 rounds (1,600 operations)
#   bench/soak/run.sh soak [N]    N seeds (default 10,000) against one ferry serve
#                                 that is never restarted, sampling each minute
#                                 the memory and descriptors of both processes
#                                 and the uploads' latency into
#                                 bench/soak/samples.jsonl, plotted to soak.png
#                                 (needs matplotlib)
#
# FERRY_SIM_FIRST=K starts at seed K (to go on from an earlier run).
# A failing seed prints how to replay it (FERRY_SIM_SEED=...). Its whole report
# (failures, what the device and the server knew of each row concerned, the
# operations) is appended to bench/soak/failures.log as it happens.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
bash deploy/local.sh start >/dev/null
eval "$(bash deploy/local.sh env)"
export FERRY_TEST_OWNER_URL="$FERRY_DATABASE_MIGRATION_URL" FERRY_TEST_APP_URL="$FERRY_DATABASE_URL" FERRY_TEST_MEMCACHED="$FERRY_MEMCACHED_SERVERS"
export FERRY_SIM_FAILURES="$ROOT/bench/soak/failures.log"
swift build -c release --build-tests -Xswiftc -enable-testing >/dev/null
run() { swift test -c release -Xswiftc -enable-testing --skip-build --filter "$1" 2>&1 | grep --line-buffered -E '^simulation|seed [0-9]+ failed|FERRY_SIM_SEED=|✘|(diverged|lost|stuck|silent|phantom|invented|restless|twice|local|error|not live|subscription|refused wait): ' || true; }
case "${1:-seeds}" in
  seeds) FERRY_SIM_SEEDS=${2:-10000} run 'SimulationTests/devicesConvergeUnderFaultsForEverySeed' ;;
  grdb) FERRY_SIM_GRDB_SEEDS=${2:-2000} run 'SimulationTests/devicesWritingThroughGRDBConvergeUnderFaults' ;;
  live) FERRY_SIM_LIVE_SEEDS=${2:-2000} run 'SimulationTests/devicesInContinuousModeConvergeUnderFaults' ;;
  subs) FERRY_SIM_SUBSCRIPTION_SEEDS=${2:-2000} run 'SimulationTests/devicesSubscribingToPublicSetsConvergeUnderFaults' ;;
  livesubs) FERRY_SIM_LIVE_SUBSCRIPTION_SEEDS=${2:-2000} run 'SimulationTests/devicesInContinuousModeSubscribingConvergeUnderFaults' ;;
  long) FERRY_SIM_LONG=1 run 'SimulationTests/eightDevicesForTwoHundredRounds' ;;
  soak)
    FERRY_SIM_SEEDS=${2:-10000} FERRY_SIM_RESTARTS=0 FERRY_SOAK_SAMPLES="$ROOT/bench/soak/samples.jsonl" \
      run 'SimulationTests/devicesConvergeUnderFaultsForEverySeed'
    python3 bench/soak/plot.py bench/soak/samples.jsonl bench/soak/soak.png && echo "plot: bench/soak/soak.png" ;;
  *) echo "usage: $0 seeds [N] | grdb [N] | live [N] | subs [N] | livesubs [N] | long | soak [N]" >&2; exit 2 ;;
esac

#!/usr/bin/env bash
# test-watchdog.sh MINUTES COMMAND...: runs a test command (deploy/test.sh's `swift test`),
# and if for MINUTES it neither prints anything nor uses a second of CPU (every test left
# is stuck waiting: its output may sit in a buffer, so output alone is not progress), or
# runs for 6 x MINUTES in all, names the tests that started and never ended, prints every
# thread's stack of the test process (when gdb is installed), and stops it.
#
# Why: a test that never ends otherwise holds the run until CI's outer limit, which then
# says nothing but "did not finish" (it happened once: the 2026-11-28 stop's CI timed out at
# 90 minutes with no failing test in its output). A hang must be a red run that names its test.
set -uo pipefail
# TEST_WATCHDOG_SECONDS replaces MINUTES in seconds (for trying the watchdog itself).
limit=${TEST_WATCHDOG_SECONDS:-$(( $1 * 60 ))}
shift
log=$(mktemp "${TMPDIR:-/tmp}/ferry-test-log.XXXXXX")
trap 'rm -f "$log"' EXIT

"$@" > >(tee "$log") 2>&1 &
pid=$!
started=$SECONDS

# The tests whose "started" line has no "passed"/"failed" line yet (Swift Testing's output),
# with how many of each name are open (a name can repeat across suites; the cases of a parameterized test are left out).
unfinished() {
  awk '
    /◇ Test case passing/ { next }
    /◇ Test .* started\.$/ { n = $0; sub(/.*◇ Test /, "", n); sub(/ started\.$/, "", n); open[n]++ }
    /[✔✘] Test .* (passed|failed)( after| with)/ { n = $0; sub(/.*[✔✘] Test /, "", n); sub(/ (passed|failed).*/, "", n); open[n]-- }
    END { for (n in open) if (open[n] > 0) print "  " n (open[n] > 1 ? " (x" open[n] ")" : "") }
  ' "$log" | sort
}

# Every process under $1, parents first.
descendants() {
  local child
  for child in $(pgrep -P "$1"); do
    echo "$child"
    descendants "$child"
  done
}

# CPU clock ticks (user + system) of the test processes under the command.
cpu_ticks() {
  local p total=0
  for p in $(descendants "$pid"); do
    total=$(( total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0) ))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

last_size=0
last_cpu=0
last_change=$SECONDS
while kill -0 "$pid" 2>/dev/null; do
  size=$(stat -c %s "$log" 2>/dev/null || echo 0)
  cpu=$(cpu_ticks)
  if [ "$size" != "$last_size" ] || (( cpu > last_cpu + hz )); then
    last_size=$size
    last_cpu=$cpu
    last_change=$SECONDS
  fi
  silent=$(( SECONDS - last_change ))
  if (( silent > limit || SECONDS - started > 6 * limit )); then
    echo "test-watchdog: silent for ${silent} s, running for $(( SECONDS - started )) s; the tests that started and never ended:" >&2
    unfinished >&2
    # The test binary runs under the command (swift test starts it as a child).
    target=$(descendants "$pid" | while read -r p; do grep -qa 'xctest' "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done | tail -n 1)
    if [ -n "$target" ] && command -v gdb >/dev/null; then
      echo "test-watchdog: the stacks of process $target's threads:" >&2
      timeout 300 gdb -p "$target" -batch -ex 'thread apply all bt 40' 2>/dev/null \
        | { if command -v swift >/dev/null; then swift demangle --simplified; else cat; fi; } >&2
    fi
    all=$(descendants "$pid")
    kill -TERM $all "$pid" 2>/dev/null
    sleep 5
    kill -KILL $all "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    echo "test-watchdog: stopped (FERRY_TEST_SILENCE_MINUTES moves the limit)" >&2
    exit 124
  fi
  sleep 5
done
wait "$pid"

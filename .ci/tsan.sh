#!/usr/bin/env bash
# ThreadSanitizer over the hand-threaded code: FerryHTTP's tests (epoll loops, workers, parked
# exchanges, the deadline queue) and FerryKit's unit tests (the engine's actor, continuous mode,
# the store over GRDB). Not in .ci/run, for CI's time: run it before each stop (docs/TESTING.md).
# `swift build --build-tests` builds every test target, so the whole package's sanitized build
# would compile Ferry, swift-crypto, jwt-kit and FerryTests too. This builds a package of the two
# suites and what they need alone, written from Package.swift's own dump (.ci/tsan-manifest.py),
# with the source folders linked in: 365 objects, where the whole package has about 1,800. Its own
# place, .build-tsan (FERRY_TSAN_SCRATCH). Built in 594 s at load 15 on 2 cores; run in 88 s.
#   bash .ci/tsan.sh            # both suites; the last line says clean or how many reports
#   bash .ci/tsan.sh Filter     # a --filter within them
# Nothing is suppressed. A report from code that is not Ferry's (Foundation, Dispatch, GRDB) may
# go in .ci/tsan.supp, read when present, with a comment saying why; never one of Ferry's own.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD
work=${FERRY_TSAN_SCRATCH:-$root/.build-tsan}
pkg=$work/package
mkdir -p "$pkg"
# The manifest's paths (Sources/X, Tests/X) and ConformanceFile's (#filePath, then ../clients).
for folder in Sources Tests clients; do ln -sfn "$root/$folder" "$pkg/$folder"; done
# Its own scratch path: a build running in .build holds the lock there.
swift package --scratch-path "$work/dump" dump-package | python3 .ci/tsan-manifest.py FerryHTTPTests FerryKitUnitTests >"$pkg/Package.swift.new"
# Rewritten only when it changes: an untouched manifest keeps SwiftPM's caches.
cmp -s "$pkg/Package.swift.new" "$pkg/Package.swift" || mv "$pkg/Package.swift.new" "$pkg/Package.swift"
rm -f "$pkg/Package.swift.new"
# The dependency versions the main build resolved, when it has.
if [ -f Package.resolved ]; then cp Package.resolved "$pkg/Package.resolved"; fi

swiftpm=(--sanitize=thread --package-path "$pkg" --scratch-path "$work/build")
start=$SECONDS
swift build --build-tests "${swiftpm[@]}" >"$work/build.log" 2>&1 || { tail -n 40 "$work/build.log"; exit 1; }
grep -E 'warning:' "$work/build.log" | sort -u | head -n 20 || true
echo "tsan: built in $((SECONDS - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime))"

# halt_on_error=0 (TSan's default): every report of the run is in the log; TSan then exits 66.
options="second_deadlock_stack=1"
if [ -f .ci/tsan.supp ]; then options="$options:suppressions=$root/.ci/tsan.supp"; fi
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}$options"
log=$work/tsan.log
start=$SECONDS
status=0
swift test --skip-build "${swiftpm[@]}" ${1:+--filter "$1"} >"$log" 2>&1 || status=$?
reports=$(grep -c '^WARNING: ThreadSanitizer' "$log" || true)
grep -E '^WARNING: ThreadSanitizer|Test run with|Executed [0-9]+ tests|recorded an issue|error:' "$log" | tail -n 20
echo "tsan: ran in $((SECONDS - start)) s (load $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)), log $log"
if [ "$status" -ne 0 ] || [ "$reports" -ne 0 ]; then
    echo "tsan: NOT clean: $reports reports, swift test exited $status"
    exit 1
fi
echo "tsan: clean"

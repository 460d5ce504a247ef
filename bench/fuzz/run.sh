#!/usr/bin/env bash
# bench/fuzz/run.sh [seconds] [target...]: builds ferry-fuzz with libFuzzer and
# AddressSanitizer, then fuzzes each target (all by default) for `seconds` (default
# 3600), FUZZ_JOBS at a time (default 2). Prints one line per target (runs, exec/s,
# coverage, corpus, result) and exits non-zero if any target crashed, leaked, timed
# out or broke a property, with the saved input's path in the log. CI runs it with 30 (.ci/run).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECONDS_EACH=${1:-3600}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(http-request chunked query json-body rank paging-token change-cursor bearer-token jwt)
JOBS=${FUZZ_JOBS:-2}
# Seconds one input may take before it counts as a hang. libFuzzer measures wall time, and a
# niced run on a busy machine was once starved for 10 s on an input that takes 40 ms.
TIMEOUT=${FUZZ_TIMEOUT:-30}
SCRATCH=${FUZZ_SCRATCH:-.build-fuzz}
OUT="$SCRATCH/runs/$(date -u +%Y%m%dT%H%M%SZ)"

echo "== fuzz build ($SCRATCH)"
build_start=$(date +%s)
# -DFERRY_FUZZ drops the replay main so libFuzzer's driver runs the target (Sources/ferry-fuzz/FuzzerDriver.swift).
swift build -c release --product ferry-fuzz --scratch-path "$SCRATCH" \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -DFERRY_FUZZ -Xswiftc -use-ld=lld
BIN="$(swift build -c release --scratch-path "$SCRATCH" --show-bin-path)/ferry-fuzz"
echo "built in $(( $(date +%s) - build_start )) s"

fuzz_one() {
    local target=$1 dir="$OUT/$1"
    mkdir -p "$dir/corpus" "$dir/artifacts"
    # New inputs go to the first corpus directory, so the seeds in the repository stay as they are.
    local dictionary=()
    [ -f "bench/fuzz/dictionaries/$target.dict" ] && dictionary=(-dict="bench/fuzz/dictionaries/$target.dict")
    set +e
    # Swift's own crash backtracer trips AddressSanitizer; libFuzzer prints the stack instead.
    SWIFT_BACKTRACE=enable=no FERRY_FUZZ_TARGET="$target" "$BIN" "$dir/corpus" "bench/fuzz/corpus/$target" \
        -max_total_time="$SECONDS_EACH" -timeout="$TIMEOUT" -rss_limit_mb=2048 -max_len=4096 \
        -print_final_stats=1 -artifact_prefix="$dir/artifacts/" "${dictionary[@]}" > "$dir/log" 2>&1
    echo $? > "$dir/status"
    set -e
}

echo "== fuzzing ${#TARGETS[@]} targets, ${SECONDS_EACH} s each, $JOBS at a time (logs in $OUT)"
running=0
for target in "${TARGETS[@]}"; do
    if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
    fuzz_one "$target" &
    running=$((running + 1))
done
wait

failed=0
printf '%-14s %12s %9s %7s %7s %7s  %s\n' target runs exec/s cov ft corpus result
for target in "${TARGETS[@]}"; do
    dir="$OUT/$target" log="$OUT/$target/log"
    stat() { sed -n "s/^stat::$1: *//p" "$log" | tail -n1; }
    # The last status line carries the coverage: `#N  DONE  cov: C ft: F corp: U/S ...`.
    line=$(grep -E '^#[0-9]+' "$log" | tail -n1 || true)
    cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$line")
    ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$line")
    corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$line")
    result=ok
    if [ "$(cat "$dir/status")" != 0 ] || ls "$dir/artifacts/"* > /dev/null 2>&1; then
        result="FAILED: $(ls "$dir/artifacts/"* 2>/dev/null | tr '\n' ' ')(log $log)"
        failed=1
    fi
    printf '%-14s %12s %9s %7s %7s %7s  %s\n' "$target" "$(stat number_of_executed_units)" \
        "$(stat average_exec_per_sec)" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$result"
done
if [ "$failed" != 0 ]; then
    echo "== fuzzing found a failure; the log's end says what:"
    for target in "${TARGETS[@]}"; do
        [ "$(cat "$OUT/$target/status")" = 0 ] && continue
        echo "-- $target"; grep -E 'ERROR|property broken|Fatal error|SUMMARY|Test unit written|artifact' "$OUT/$target/log" | head -n 20
    done
    exit 1
fi

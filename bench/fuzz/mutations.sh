#!/usr/bin/env bash
# Do the fuzz targets catch bugs? Breaks the product code on purpose, one patch of
# bench/fuzz/mutations/ at a time (named <target>--<bug>.patch), fuzzes that target
# with run.sh, and says whether it failed (caught) or passed (MISSED); the source
# is restored after each.
#
#   bench/fuzz/mutations.sh              120 s per mutation
#   bench/fuzz/mutations.sh 300
#   bench/fuzz/mutations.sh 60 'chunked--*'   only the patches matching a pattern
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
SECONDS_EACH=${1:-120}
PATTERN=${2:-*}
if ! git diff --quiet -- Sources; then echo "Sources has uncommitted changes; commit or stash them first" >&2; exit 2; fi
applied=""
restore() { if [ -n "$applied" ]; then git apply -R "$applied"; fi; }
trap restore EXIT
for patch in bench/fuzz/mutations/$PATTERN.patch; do
    [ -e "$patch" ] || { echo "no patch matches $PATTERN" >&2; exit 2; }
    name=$(basename "$patch" .patch)
    target=${name%%--*}
    git apply "$patch"; applied=$patch
    start=$(date +%s)
    # Its own scratch path: a fuzz run in .build-fuzz can go on beside it.
    out=$(FUZZ_JOBS=1 FUZZ_SCRATCH=${FUZZ_SCRATCH:-.build-fuzz-mutants} bash bench/fuzz/run.sh "$SECONDS_EACH" "$target" 2>&1 || true)
    git apply -R "$patch"; applied=""
    if grep -q '^== fuzzing found a failure' <<<"$out"; then
        why=$(grep -m1 -oE 'property broken: .*|ERROR: [A-Za-z]+: [a-z-]+' <<<"$out" | cut -c1-100 || true)
        echo "$name: caught in $(( $(date +%s) - start )) s with the build ($why)"
    else
        echo "$name: MISSED in ${SECONDS_EACH} s"
    fi
done

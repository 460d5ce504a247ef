#!/usr/bin/env bash
# swift-format over every tracked Swift file, with the repository's .swift-format (4-space
# indentation, 150 columns, the line breaks the author chose kept). Red on any finding.
#   bash .ci/format.sh          # lint, as CI does
#   bash .ci/format.sh --fix    # rewrite the files in place, then lint
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.swift')
if [ "${1:-}" = "--fix" ]; then swift format format --in-place --parallel "${files[@]}"; fi
swift format lint --strict --parallel "${files[@]}"
echo "swift-format: ${#files[@]} files clean"

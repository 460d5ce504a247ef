#!/usr/bin/env bash
# Fails when two tracked paths (files or the folders above them) differ only in case.
# On a case-insensitive file system, macOS's default, such a pair is one path: a clone
# there mixes their files (Sources/ferry and Sources/Ferry did, issue 49).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
collisions=$(git ls-files | awk -F/ '{ path = ""; for (i = 1; i <= NF; i++) { path = (i == 1 ? $1 : path "/" $i); print path } }' \
  | sort -u | awk '{ key = tolower($0); if (key in seen && seen[key] != $0) print seen[key] " and " $0; else seen[key] = $0 }')
if [ -n "$collisions" ]; then
  echo "paths that differ only in case (one path on macOS and Windows):" >&2
  echo "$collisions" >&2
  exit 1
fi
echo "case collisions: none in $(git ls-files | wc -l) tracked files"

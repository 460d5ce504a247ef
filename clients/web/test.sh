#!/usr/bin/env bash
# Builds FerryWeb with Debian's TypeScript and runs every web test: the pure tests and
# the conformance suite under `node --test`. deploy/test.sh calls this.
set -euo pipefail
cd "$(dirname "$0")"
command -v tsc >/dev/null || { echo "tsc missing: bash deploy/local.sh install (node-typescript)" >&2; exit 1; }
rm -rf dist
tsc -p .
node --test dist/test/*.test.js

#!/usr/bin/env bash
# Builds FerryKit's unit tests alone, in a scratch path of their own, and fails if any server
# module was compiled on the way: the proof that they build where FerryKit ships (macOS, iOS),
# where CEpoll and libpq do not exist (issue 49). About two minutes (GRDB's build).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scratch=${FERRY_KIT_ALONE_SCRATCH:-.build-kit-alone}
swift build --scratch-path "$scratch" --target FerryKitUnitTests 2>&1 | tail -n 1
built=$(ls "$scratch"/debug/Modules 2>/dev/null | sed -n 's/\.swiftmodule$//p' | sort)
server=$(echo "$built" | grep -xE 'Ferry|FerryBase|FerryHTTP|FerryPostgres|FerryMemcached|FerryMigrations|FerryCoreMigrations|FerryTestSupport|FerryHTTPTestSupport' || true)
if [ -n "$server" ]; then
  echo "FerryKitUnitTests built server modules: $server" >&2
  exit 1
fi
echo "FerryKitUnitTests built alone: $(echo $built)"

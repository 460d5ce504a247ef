#!/usr/bin/env bash
# Builds FerryKit's unit tests alone, in a scratch path that holds no server module yet, and
# fails if any server module was compiled on the way: the proof that they build where FerryKit
# ships (macOS, iOS), where CEpoll and libpq do not exist (issue 49). About two minutes (GRDB's
# build). FERRY_KIT_ALONE_SCRATCH names the scratch path (default .build-kit-alone, its own):
# CI, on a fresh clone, gives it .build before anything else builds there, so that the suite's
# debug build reuses GRDB and FerryKit instead of compiling them a second time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
scratch=${FERRY_KIT_ALONE_SCRATCH:-.build-kit-alone}
server_modules() {
  ls "$scratch"/debug/Modules 2>/dev/null | sed -n 's/\.swiftmodule$//p' | sort \
    | grep -xE 'Ferry|FerryBase|FerryHTTP|FerryPostgres|FerryMemcached|FerryMigrations|FerryCoreMigrations|FerryTestSupport|FerryHTTPTestSupport' || true
}
# A server module already there would prove nothing either way: this build must start without one.
if [ -n "$(server_modules)" ]; then
  echo "$scratch already holds server modules ($(echo $(server_modules))): give FERRY_KIT_ALONE_SCRATCH a path of its own" >&2
  exit 1
fi
swift build --scratch-path "$scratch" --target FerryKitUnitTests 2>&1 | tail -n 1
built=$(ls "$scratch"/debug/Modules 2>/dev/null | sed -n 's/\.swiftmodule$//p' | sort)
server=$(server_modules)
if [ -n "$server" ]; then
  echo "FerryKitUnitTests built server modules: $server" >&2
  exit 1
fi
echo "FerryKitUnitTests built alone: $(echo $built)"

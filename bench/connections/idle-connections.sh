#!/usr/bin/env bash
# Issue 22's memory per idle keep-alive connection: N connections (default
# 10,000) each answered one GET /healthz and then left open; the server's RSS
# growth divided by N, against the target of 16 KiB. Needs the dev services.
#
#   bench/connections/idle-connections.sh            (CONNECTIONS=10000; FERRY_BIN=path skips the build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
CONNECTIONS=${CONNECTIONS:-10000}
ulimit -n "$(ulimit -Hn)"  # client and server each hold one descriptor per connection
source bench/lib.sh
bench_binary
bench_database ferry_bench_idle
bench_serve FERRY_LIMITS_MAX_CONNECTIONS=$((CONNECTIONS + 1000)) FERRY_LIMITS_IDLE_TIMEOUT_SECONDS=600
python3 bench/connections/idle-connections.py "$PORT" "$SERVER" "$CONNECTIONS"

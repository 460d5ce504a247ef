#!/usr/bin/env bash
# bench/auth/jwks-spin.sh: the CPU one JWKS fetch uses while the provider hangs (accepts the
# connection, never answers), 3 s timeout: Ferry's fetch (CCurlFetch's ccurlfetch_get,
# libcurl's easy interface) against the one it replaced (a URLSession dataTask), each a
# small program of bench/auth/jwks-spin/ measuring its own getrusage around the fetch (issue 51).
#   bash bench/auth/jwks-spin.sh [RUNS]     (BENCH_IDP_PORT, default 18491)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
PORT=${BENCH_IDP_PORT:-18491}
RUNS=${1:-3}
WORK=$(mktemp -d)
python3 -c '
import socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(16)
time.sleep(3600)' "$PORT" &
HANG=$!
trap 'kill $HANG; rm -rf "$WORK"' EXIT
cc -O2 -I "$ROOT/Sources/CCurlFetch/include" "$ROOT/bench/auth/jwks-spin/curl-easy.c" "$ROOT/Sources/CCurlFetch/ccurlfetch.c" \
  -lcurl -o "$WORK/curl-easy"
swiftc -O "$ROOT/bench/auth/jwks-spin/urlsession.swift" -o "$WORK/urlsession"
for _ in $(seq 1 "$RUNS"); do
  for program in curl-easy urlsession; do
    /usr/bin/time -f "$program: wall %e s" "$WORK/$program" "http://127.0.0.1:$PORT/jwks" 2>&1 | grep -v '^error'
  done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg)"

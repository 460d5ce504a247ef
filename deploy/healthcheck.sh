#!/usr/bin/env bash
# Exits 0 when Ferry answers GET PATH with 200, else 1. Uses bash's /dev/tcp,
# so the runtime image needs no curl.
#
#   ferry-healthcheck [PORT] [PATH]     defaults: $FERRY_LISTEN_PORT or 8080, /readyz
set -uo pipefail
PORT=${1:-${FERRY_LISTEN_PORT:-8080}}
PATH_=${2:-/readyz}
exec 3<>"/dev/tcp/127.0.0.1/$PORT" || exit 1
printf 'GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n' "$PATH_" >&3
IFS= read -r -t 5 status <&3 || exit 1
exec 3<&-
case "$status" in
  "HTTP/1.1 200 "*) exit 0 ;;
  *) echo "unhealthy: ${status%$'\r'}" >&2; exit 1 ;;
esac

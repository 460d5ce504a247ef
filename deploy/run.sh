#!/usr/bin/env bash
# Runs Ferry on this machine: a project-local PostgreSQL and memcached
# (deploy/local.sh), Ferry's schema and the study example's migrated
# (examples/study), a demo user, and the server in the foreground on
# 127.0.0.1:${FERRY_LISTEN_PORT:-8080}. Ctrl-C stops the server;
# `deploy/local.sh stop` stops the services.
#
#   FERRY_BUILD=release deploy/run.sh    # optimised build (slower to build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"

bash deploy/local.sh start
eval "$(bash deploy/local.sh env --socket)"
export FERRY_LISTEN_PORT=${FERRY_LISTEN_PORT:-8080}

CONFIGURATION=${FERRY_BUILD:-debug}
swift build -c "$CONFIGURATION" --product ferry
FERRY="$(swift build -c "$CONFIGURATION" --show-bin-path)/ferry"

"$FERRY" migrate --dir "$ROOT/examples/study/migrations"

DEMO_PASSWORD=${FERRY_DEMO_PASSWORD:-demo-password}
if ! out=$(printf '%s\n' "$DEMO_PASSWORD" | "$FERRY" user add demo 2>&1); then
  case "$out" in
    *exists*) ;;  # made by an earlier run
    *) echo "$out" >&2; exit 1 ;;
  esac
fi
# Said before the token and the curl lines, which would name a port another server answers.
if (exec 3<>"/dev/tcp/127.0.0.1/$FERRY_LISTEN_PORT") 2>/dev/null; then
  echo "deploy/run.sh: port $FERRY_LISTEN_PORT is taken on 127.0.0.1; choose another with FERRY_LISTEN_PORT=<port> deploy/run.sh" >&2
  exit 1
fi
TOKEN=$("$FERRY" token issue demo)
SET_ID=$(python3 -c 'import uuid; print(uuid.uuid4())')
BASE="http://127.0.0.1:$FERRY_LISTEN_PORT"

cat <<TXT

Ferry is starting on $BASE (demo user: demo / $DEMO_PASSWORD).
Your token:  $TOKEN

Try, from another terminal:

  # 1. create a study set (the client picks its id, as an offline app would)
  curl -s -X POST $BASE/v1/study_sets -H 'Authorization: Bearer $TOKEN' \\
       -H 'Content-Type: application/json' -d '{"id": "$SET_ID", "title": "Spanish verbs"}'

  # 2. read it, with its ETag
  curl -si $BASE/v1/study_sets/$SET_ID -H 'Authorization: Bearer $TOKEN'

  # 3. ask again with that ETag: 304 Not Modified
  curl -si $BASE/v1/study_sets/$SET_ID -H 'Authorization: Bearer $TOKEN' -H 'If-None-Match: "1"'

TXT
exec "$FERRY" serve

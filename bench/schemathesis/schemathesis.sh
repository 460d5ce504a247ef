#!/usr/bin/env bash
# Issue 21, item 10: schemathesis against Ferry's own /openapi.json, every
# check, and fails on any failure. CI calls it from .ci/run.
#
#   bench/schemathesis/schemathesis.sh            (EXAMPLES=10 MIN_CASES=2000 AUTH=jwt APP=study)
#   APP=todo bench/schemathesis/schemathesis.sh   the same on examples/todo (issue 33: an app on the
#                                    sync rules alone); CI runs both
#
# Installs schemathesis (pinned) into a virtualenv under .local/ when missing,
# creates a scratch database, migrates it, adds a user with a token, serves
# Ferry on a free port, and runs every phase (examples, coverage, fuzzing,
# stateful) in both positive and negative modes. The run's case count is
# schemathesis' own "Test cases: N generated" line; the script refuses a run
# that generated fewer than MIN_CASES.
#
# Environment: FERRY_BIN (a ferry binary; default: a release build),
# FERRY_SCHEMATHESIS_OWNER_URL / FERRY_SCHEMATHESIS_APP_URL (server URLs without a
# database) and FERRY_SCHEMATHESIS_MEMCACHED; without them, deploy/local.sh's services.
# EXAMPLES (schemathesis --max-examples, per operation and phase), MIN_CASES
# (default 2000), AUTH (jwt, the default: the operations run as a JWT's user with
# JWT sign-in on beside Ferry's tokens; token: as a Ferry token's user),
# SEED (default random; schemathesis prints the one it used),
# SCHEMATHESIS_REPORT (a directory for the JUnit and NDJSON reports).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
VERSION=4.32.5
VENV=${FERRY_LOCAL_DIR:-$ROOT/.local}/schemathesis-$VERSION
EXAMPLES=${EXAMPLES:-10}
MIN_CASES=${MIN_CASES:-2000}

# One install at a time: CI runs the two apps side by side (.ci/run).
mkdir -p "$(dirname "$VENV")"
exec 9>"$VENV.lock"
flock 9
if ! "$VENV/bin/schemathesis" --version 2>/dev/null | grep -qF "$VERSION"; then
  python3 -m venv "$VENV" 2>/dev/null || { apt-get install -y -qq python3-venv >/dev/null && python3 -m venv "$VENV"; }
  "$VENV/bin/pip" install -q "schemathesis==$VERSION"
fi
flock -u 9

if [ -z "${FERRY_BIN:-}" ]; then
  swift build -c release --product ferry >/dev/null
  FERRY_BIN=$ROOT/.build/release/ferry
fi
if [ -n "${FERRY_SCHEMATHESIS_OWNER_URL:-}" ]; then
  OWNER_BASE=$FERRY_SCHEMATHESIS_OWNER_URL
  APP_BASE=${FERRY_SCHEMATHESIS_APP_URL:?FERRY_SCHEMATHESIS_APP_URL goes with FERRY_SCHEMATHESIS_OWNER_URL}
  export FERRY_MEMCACHED_SERVERS=${FERRY_SCHEMATHESIS_MEMCACHED:?FERRY_SCHEMATHESIS_MEMCACHED goes with FERRY_SCHEMATHESIS_OWNER_URL}
else
  bash deploy/local.sh start >/dev/null
  eval "$(bash deploy/local.sh env)"
  OWNER_BASE=${FERRY_DATABASE_MIGRATION_URL%/*}
  APP_BASE=${FERRY_DATABASE_URL%/*}
fi

DB=ferry_schemathesis_$$
WORK=$(mktemp -d /tmp/ferry-schemathesis.XXXXXX)
SERVER=
cleanup() {
  [ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true
  wait 2>/dev/null || true
  psql -X -q "$OWNER_BASE/postgres" -c "DROP DATABASE IF EXISTS $DB WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT
psql -X -q -v ON_ERROR_STOP=1 "$OWNER_BASE/postgres" -c "CREATE DATABASE $DB"
export FERRY_DATABASE_MIGRATION_URL="$OWNER_BASE/$DB" FERRY_DATABASE_URL="$APP_BASE/$DB"
"$FERRY_BIN" migrate --dir "$ROOT/examples/${APP:-study}/migrations" >/dev/null
echo "schemathesis-password" | "$FERRY_BIN" user add schemathesis >/dev/null
export FERRY_SCHEMATHESIS_TOKEN FERRY_SCHEMATHESIS_REVOKED_TOKEN FERRY_SCHEMATHESIS_BASIC
FERRY_SCHEMATHESIS_TOKEN=$("$FERRY_BIN" token issue schemathesis | tail -n1)
# Issue 36: JWT sign-in is on beside Ferry's own tokens, and the operations run
# as a JWT's user (AUTH=token runs them with a Ferry token instead). The JWT is
# HS256 with the provider's secret, valid for two hours.
JWT_ISSUER=https://schemathesis.test
JWT_SECRET=schemathesis-hs256-secret-of-at-least-32-bytes
export FERRY_AUTH_JWT_PROVIDERS="[{\"issuer\": \"$JWT_ISSUER\", \"audience\": \"ferry\", \"secret\": \"$JWT_SECRET\"}]"
if [ "${AUTH:-jwt}" = jwt ]; then
  FERRY_SCHEMATHESIS_TOKEN=$(JWT_ISSUER=$JWT_ISSUER JWT_SECRET=$JWT_SECRET python3 -c '
import base64, hashlib, hmac, json, os, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
now = int(time.time())
head = b(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b(json.dumps(
    {"iss": os.environ["JWT_ISSUER"], "aud": "ferry", "sub": "schemathesis", "iat": now, "exp": now + 7200, "org_id": "acme"}).encode())
print(head + "." + b(hmac.new(os.environ["JWT_SECRET"].encode(), head.encode(), hashlib.sha256).digest()))')
fi
FERRY_SCHEMATHESIS_REVOKED_TOKEN=$("$FERRY_BIN" token issue schemathesis | tail -n1)
FERRY_SCHEMATHESIS_BASIC=$(printf 'schemathesis:schemathesis-password' | base64)
# The console's API (docs/CONSOLE.md): an admin operator, a token for every console
# operation, one of its own for signing out, and the password for signing in.
echo "schemathesis-operator" | "$FERRY_BIN" operator add schemathesis-operator --role admin >/dev/null
export FERRY_SCHEMATHESIS_OPERATOR_TOKEN FERRY_SCHEMATHESIS_OPERATOR_SIGNOUT_TOKEN FERRY_SCHEMATHESIS_OPERATOR_BASIC
FERRY_SCHEMATHESIS_OPERATOR_TOKEN=$("$FERRY_BIN" operator token schemathesis-operator | tail -n1)
FERRY_SCHEMATHESIS_OPERATOR_SIGNOUT_TOKEN=$("$FERRY_BIN" operator token schemathesis-operator | tail -n1)
FERRY_SCHEMATHESIS_OPERATOR_BASIC=$(printf 'schemathesis-operator:schemathesis-operator' | base64)
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
# Long polls and event streams are held at most a second: schemathesis draws `wait`
# from the whole range it may take, and a run of thousands of cases must not wait
# the default 30 s on each (they are answered the same, only sooner).
FERRY_LISTEN_PORT=$PORT FERRY_LOGGING_LEVEL=error FERRY_LIVE_MAX_WAIT_SECONDS=1 FERRY_LIVE_MAX_STREAM_SECONDS=1 \
  "$FERRY_BIN" serve >"$WORK/serve.log" 2>&1 &
SERVER=$!
for _ in $(seq 1 100); do curl -fs -o /dev/null "http://127.0.0.1:$PORT/healthz" && break; sleep 0.1; done

# One worker: with two, hypothesis' lambda descriptions hit CPython 3.11's "AST
# constructor recursion depth mismatch" (a thread-safety bug of ast.parse, fixed
# in 3.12), which schemathesis reports as errors. The example database is off,
# so that each run stands alone. The tokens and the password reach
# bench/schemathesis/schemathesis.toml through the environment.
args=(--config-file "$ROOT/bench/schemathesis/schemathesis.toml" run "http://127.0.0.1:$PORT/openapi.json"
  --checks all --max-examples "$EXAMPLES"
  --workers 1 --no-color --generation-database none
  --report junit,ndjson --report-dir "${SCHEMATHESIS_REPORT:-$WORK/report}")
[ -z "${SEED:-}" ] || args+=(--seed "$SEED")
echo "== schemathesis $VERSION: ${args[*]}" >&2
START=$(date +%s)
set +e
"$VENV/bin/schemathesis" "${args[@]}" 2>&1 | tee "$WORK/out"
STATUS=${PIPESTATUS[0]}
set -e
ELAPSED=$(($(date +%s) - START))
# schemathesis prints "Test cases:" and, on the next line, "<n> generated, ...".
CASES=$(grep -A1 '^Test cases:' "$WORK/out" | grep -oE '[0-9]+ generated' | grep -oE '[0-9]+' || true)
if grep -q "panic\|fatal error" "$WORK/serve.log"; then
  echo "ferry serve crashed:" >&2; cat "$WORK/serve.log" >&2; STATUS=1
fi
if [ "${CASES:-0}" -lt "$MIN_CASES" ]; then
  echo "schemathesis generated ${CASES:-no} cases, fewer than $MIN_CASES" >&2; STATUS=1
fi
VERDICT=PASS; [ "$STATUS" = 0 ] || VERDICT=FAIL
echo "schemathesis (examples/${APP:-study}): ${CASES:-?} cases, --checks all, ${ELAPSED} s: $VERDICT"
exit "$STATUS"

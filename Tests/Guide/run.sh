#!/usr/bin/env bash
# The guide's doc test: runs every ```sh block of docs/GUIDE.md, in order, as
# written, in one bash session in an empty directory, and checks that every
# ```swift block is, line for line, code a test runs (under Tests/FerryKitTests).
#
#   bash Tests/Guide/run.sh
#
# Needs FERRY_TEST_OWNER_URL, FERRY_TEST_APP_URL and FERRY_TEST_MEMCACHED (deploy/test.sh
# exports them) and a built `ferry` (.build/debug/ferry, or FERRY_BIN). The guide's
# commands reach a scratch database and a free port through the FERRY_* variables
# that override any configuration key, as a reader's deploy/local.sh env would.
# Prints each command as it runs; exits non-zero on the first that fails.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GUIDE=$ROOT/docs/GUIDE.md
BIN=${FERRY_BIN:-$ROOT/.build/debug/ferry}
for var in FERRY_TEST_OWNER_URL FERRY_TEST_APP_URL FERRY_TEST_MEMCACHED; do
  [ -n "${!var:-}" ] || { echo "guide test: $var is not set (run it through deploy/test.sh)" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "guide test: $BIN is not built (swift build --product ferry)" >&2; exit 2; }

WORK=$(mktemp -d)
DB=ferry_guide_$(date +%s)_$RANDOM
url_for() { local url=$1 db=$2; echo "${url%/*}/$db"; }
admin() { psql -X -q -v ON_ERROR_STOP=1 "$FERRY_TEST_OWNER_URL" -c "$1"; }
cleanup() {
  admin "DROP DATABASE IF EXISTS \"$DB\" WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# Every ```swift block must be code that runs: each of its lines appears, in order,
# in one test file.
python3 - "$GUIDE" "$ROOT/Tests/FerryKitTests" <<'PY'
import pathlib, re, sys
guide = pathlib.Path(sys.argv[1]).read_text()
blocks = re.findall(r"^```swift\n(.*?)^```", guide, re.S | re.M)
sources = {p: [l.strip() for l in p.read_text().splitlines() if l.strip()] for p in pathlib.Path(sys.argv[2]).rglob("*.swift")}
for block in blocks:
    lines = [l.strip() for l in block.splitlines() if l.strip() and not l.strip().startswith("//")]
    def within(source):
        at = 0
        for line in lines:
            code = line.split("  //")[0].rstrip()
            while at < len(source) and source[at].split("  //")[0].rstrip() != code: at += 1
            if at == len(source): return False
            at += 1
        return True
    found = [str(p) for p, source in sources.items() if within(source)]
    if not found:
        sys.exit("guide test: this swift block of docs/GUIDE.md is in no test under Tests/FerryKitTests:\n" + block)
    print(f"swift block of {len(lines)} lines runs in {found[0]}")
PY

# The guide's shell, block after block.
python3 - "$GUIDE" > "$WORK/guide.sh" <<'PY'
import re, sys
guide = open(sys.argv[1]).read()
blocks = re.findall(r"^```sh\n(.*?)^```", guide, re.S | re.M)
# The guide stops its server at the end; a failure before that must not leave it running.
print("set -euo pipefail\ntrap 'kill ${FERRY_PID:-} 2>/dev/null || true' EXIT\nset -x")
for i, block in enumerate(blocks, 1):
    print(f": guide block {i}")
    print(block)
PY

admin "CREATE DATABASE \"$DB\""
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$WORK/bin" "$WORK/home"
ln -s "$BIN" "$WORK/bin/ferry"
cd "$WORK/home"
start=$(date +%s)
env PATH="$WORK/bin:$PATH" \
    FERRY_DATABASE_URL="$(url_for "$FERRY_TEST_APP_URL" "$DB")" \
    FERRY_DATABASE_MIGRATION_URL="$(url_for "$FERRY_TEST_OWNER_URL" "$DB")" \
    FERRY_MEMCACHED_SERVERS="$FERRY_TEST_MEMCACHED" FERRY_LISTEN_PORT="$PORT" FERRY_LOGGING_LEVEL=warning \
    bash "$WORK/guide.sh"
echo "guide test: $(grep -c '^: guide block' "$WORK/guide.sh") blocks of docs/GUIDE.md ran as written in $(( $(date +%s) - start )) s"

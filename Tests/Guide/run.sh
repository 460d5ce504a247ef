#!/usr/bin/env bash
# The guide's doc test: runs every ```sh block of docs/GUIDE.md, in order, as
# written, in one bash session in an empty directory, and checks that every
# ```swift block is, line for line, code a test runs (under Tests/FerryKitTests).
#
#   bash Tests/Guide/run.sh
#
# Runs the guide the way a reader does: on fresh services that deploy/local.sh starts
# (what "Before you start" says to run), in a scratch FERRY_LOCAL_DIR, on free ports; then
# the guide's commands in a clean environment: `env -i` with PATH (where `ferry` is),
# HOME, and the port variables the guide documents for a machine whose default ports are
# taken (FERRY_PG_PORT, FERRY_MC_PORT, FERRY_LISTEN_PORT), as this shared machine's are.
# Nothing else: the database and memcached URLs come from the ferry.json `ferry init`
# writes, or from what the guide's own commands set. Needs a built `ferry`
# (.build/debug/ferry, or FERRY_BIN) and `deploy/local.sh install` done.
# Prints each command as it runs; exits non-zero on the first that fails.
set -euo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
GUIDE=$ROOT/docs/GUIDE.md
BIN=${FERRY_BIN:-$ROOT/.build/debug/ferry}
[ -x "$BIN" ] || { echo "guide test: $BIN is not built (swift build --product ferry)" >&2; exit 2; }

WORK=$(mktemp -d)
# deploy/local.sh runs PostgreSQL as the postgres user when run as root: it must reach $WORK/local.
chmod 755 "$WORK"
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
PORTS=(FERRY_LOCAL_DIR="$WORK/local" FERRY_PG_PORT="$(free_port)" FERRY_MC_PORT="$(free_port)")
cleanup() {
  env "${PORTS[@]}" bash "$ROOT/deploy/local.sh" stop >/dev/null 2>&1 || true
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

# The guide's shell, block after block, traced (a failing block shows its commands); the
# trace's bearer tokens are masked on their way to the log, throwaway as they are.
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

env "${PORTS[@]}" bash "$ROOT/deploy/local.sh" start
mkdir -p "$WORK/bin" "$WORK/home"
ln -s "$BIN" "$WORK/bin/ferry"
cd "$WORK/home"
start=$(date +%s)
env -i PATH="$WORK/bin:$PATH" HOME="$WORK/home" \
    "${PORTS[@]:1}" FERRY_LISTEN_PORT="$(free_port)" \
    bash "$WORK/guide.sh" 2> >(sed -u -E 's/(Bearer )[A-Za-z0-9._~+\/=-]+/\1<token>/g' >&2)
echo "guide test: $(grep -c '^: guide block' "$WORK/guide.sh") blocks of docs/GUIDE.md ran as written in $(( $(date +%s) - start )) s"

#!/usr/bin/env bash
# Builds Ferry for production and lays out an install tree under PREFIX:
#
#   PREFIX/bin/ferry                    the server and CLI (Swift runtime linked statically;
#                                       Ferry's own migrations are built into it)
#   PREFIX/bin/ferry-healthcheck        the probe the Docker HEALTHCHECK runs
#   PREFIX/share/ferry/examples/NAME/migrations/   each example app's migrations
#                                       (`ferry migrate --dir` one of them to try it)
#   PREFIX/share/ferry/config.example.json
#
# The Dockerfile's builder stage runs exactly this script, and so does CI
# (.ci/run), so the image's build steps are tested on every CI run.
#
#   deploy/build.sh PREFIX              FERRY_BUILD=debug for a faster, unoptimised build
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
PREFIX=${1:?usage: deploy/build.sh PREFIX}
CONFIGURATION=${FERRY_BUILD:-release}

# Static Swift runtime and Foundation: the runtime image then needs only the C
# libraries (libpq5, libmemcached11 and its libmemcachedutil2, and libcurl4, which
# CCurlFetch links to fetch JWT providers' key sets). Swift 6.3's static
# Foundation archives do not pull in their own dependencies, so name them, by path:
# the flags reach every link, the build plugins' tools too (Sources/EmbedFiles), which
# are linked for the host without the static runtime's search path, where `-lNAME`
# finds nothing; an archive a link does not need adds nothing to it.
SWIFT_STATIC=$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")/lib/swift_static/linux
STATIC=(--static-swift-stdlib)
for lib in FoundationInternationalization FoundationEssentials CoreFoundation _FoundationICU \
           _FoundationCShims _FoundationCollections BlocksRuntime; do
  STATIC+=(-Xlinker "$SWIFT_STATIC/lib$lib.a")
done
swift build -c "$CONFIGURATION" --product ferry "${STATIC[@]}"
BIN=$(swift build -c "$CONFIGURATION" --show-bin-path "${STATIC[@]}")

install -d "$PREFIX/bin"
install -m 0755 "$BIN/ferry" "$PREFIX/bin/ferry"
install -m 0755 deploy/healthcheck.sh "$PREFIX/bin/ferry-healthcheck"
for example in examples/*/migrations; do
  install -d "$PREFIX/share/ferry/$example"
  install -m 0644 "$example"/*.sql "$PREFIX/share/ferry/$example/"
done
install -m 0644 config.example.json "$PREFIX/share/ferry/config.example.json"

# Smoke test: the installed binary starts and knows its version.
"$PREFIX/bin/ferry" version
echo "installed into $PREFIX"

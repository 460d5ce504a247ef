#!/usr/bin/env bash
# Issue 22's full first sync: a user with 100,000 terms in 1,000 sets syncs
# everything, by Index pages and by the changes feed, with and without gzip;
# bytes on the wire (headers included) and wall time (best of 3), one client
# on loopback. Needs the dev services.
#
#   bench/first-sync/first-sync.sh            (FERRY_BIN=path skips the release build)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
source bench/lib.sh
bench_binary
bench_database ferry_bench_first_sync
echo "bench-password" | "$BIN" user add syncer >/dev/null
psql -X -q -v ON_ERROR_STOP=1 "$FERRY_DATABASE_MIGRATION_URL" <<'SQL'
INSERT INTO app.study_sets (creator_id, title, description)
SELECT (SELECT id FROM ferry.users WHERE name = 'syncer'), 'set ' || s, 'a set of a hundred terms' FROM generate_series(1, 1000) s;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for term ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i;
ANALYZE app.study_sets, app.terms;
SQL
TOKEN=$("$BIN" token issue syncer | tail -n1)
bench_serve
# The feed serves a write once every transaction older than it has ended, cluster-wide.
sleep 1
python3 bench/first-sync/first-sync.py "$PORT" "$TOKEN"

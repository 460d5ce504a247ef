#!/usr/bin/env bash
# A collaborator's first sync of shared sets: 100 sets of 100 terms owned by one user and
# shared with another (set_collaborators), read by the other through the changes feed from
# the start in pages of 1,000. Prints pages, entries, distinct rows, rows served more than
# once and bytes (identity, bodies only). Each shared row came twice before stop 30's grant
# change (once at its own position, once with the access); it comes once now.
#
#   bench/first-sync/shared-sync.sh            (FERRY_BIN=path skips the release build)
#   FERRY_BIN=<release A> bench/first-sync/shared-sync.sh; FERRY_BIN=<release B> ...   (compare two builds)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
source bench/lib.sh
bench_binary
bench_database ferry_bench_shared_sync
bench_users owner friend
psql -X -q -v ON_ERROR_STOP=1 "$FERRY_DATABASE_MIGRATION_URL" <<'SQL'
INSERT INTO app.study_sets (creator_id, title, description)
SELECT (SELECT id FROM ferry.users WHERE name = 'owner'), 'set ' || s, 'shared' FROM generate_series(1, 100) s;
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for term ' || i, 'r' || lpad(i::text, 3, '0') || 'V'
  FROM app.study_sets s CROSS JOIN generate_series(1, 100) i;
INSERT INTO app.set_collaborators (set_id, user_id)
SELECT s.id, (SELECT id FROM ferry.users WHERE name = 'friend') FROM app.study_sets s;
ANALYZE app.study_sets, app.terms, app.set_collaborators;
SQL
bench_serve
# The feed serves a write once every transaction that wrote a synced row before it has ended.
sleep 1
python3 - "$PORT" "$FRIEND" <<'PY'
import collections, json, sys, urllib.request
port, token = sys.argv[1], sys.argv[2]
cursor, entries, size, pages, seen = None, 0, 0, 0, collections.Counter()
while True:
    url = f"http://127.0.0.1:{port}/v1/changes?limit=1000" + (f"&since={cursor}" if cursor else "")
    body = urllib.request.urlopen(urllib.request.Request(url, headers={"Authorization": "Bearer " + token})).read()
    size += len(body)
    pages += 1
    page = json.loads(body)
    for change in page["changes"]:
        entries += 1
        seen[(change["resource"], change["data"]["id"])] += 1
    cursor = page["cursor"]
    if not page["has_more"]:
        break
twice = sum(1 for count in seen.values() if count > 1)
print(f"pages {pages}, entries {entries}, distinct rows {len(seen)}, served more than once {twice}, bytes {size}")
PY

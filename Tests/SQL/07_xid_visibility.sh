#!/usr/bin/env bash
# role: owner
# The premise of the changes feed: rows are ordered by _ferry_xid (their
# writer's stamp) and served only below ferry.feed_frontier() (until core
# 0023, pg_snapshot_xmin(pg_current_snapshot())). A transaction that
# starts first but commits last must hold back rows written (and committed)
# after it started, so that a cursor never moves past it.
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/_sessions.sh"

q "CREATE SCHEMA vis; CREATE TABLE vis.items (id int PRIMARY KEY, x text); CREATE TABLE vis.release (done boolean);"
q "SELECT ferry.enable_sync('vis.items')" >/dev/null
q "INSERT INTO vis.items (id, x) VALUES (1, 'a'), (2, 'b')"

# T1: writes row 1 first, then stays open until the checks below release it
# (a row in vis.release, an unsynced table): a fixed sleep could end before a
# loaded machine got through them (issue 49).
PGAPPNAME=ferry_vis_t1 "$PSQL" -X -q -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" >/dev/null <<SQL &
BEGIN;
UPDATE vis.items SET x = 't1' WHERE id = 1;
$(until_released vis.release T1)
COMMIT;
SQL
t1=$!
started ferry_vis_t1

# T2: starts after T1, commits before it.
q "UPDATE vis.items SET x = 't2' WHERE id = 2"
[ "$(q "SELECT _ferry_xid >= ferry.feed_frontier() FROM vis.items WHERE id = 2")" = t ] \
  || fail "row 2 (committed) must be held back while the older T1 runs"
[ "$(q "SELECT x FROM vis.items WHERE id = 1")" = a ] || fail "T1's write is not visible yet"

q "INSERT INTO vis.release VALUES (true)"
wait $t1 || fail "T1 failed"
# Only this database's writers of synced rows hold the frontier (cores 0023,
# 0032), so other suites sharing the cluster do not.
for _ in $(seq 100); do
  [ "$(q "SELECT bool_and(_ferry_xid < ferry.feed_frontier()) FROM vis.items")" = t ] && break
  sleep 0.1
done
[ "$(q "SELECT bool_and(_ferry_xid < ferry.feed_frontier()) FROM vis.items")" = t ] \
  || fail "after T1 commits both rows are below the frontier"
[ "$(q "SELECT (SELECT _ferry_xid FROM vis.items WHERE id = 1) < (SELECT _ferry_xid FROM vis.items WHERE id = 2)")" = t ] \
  || fail "T1's row sorts before T2's although it committed later"
echo "PASS 07_xid_visibility"

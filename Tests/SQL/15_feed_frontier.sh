#!/usr/bin/env bash
# role: owner
# ferry.feed_frontier() (core 0023): the feed waits for the running
# transactions of this database only. A write transaction of another database
# of the cluster, older than a commit here, held pg_snapshot_xmin (the former
# frontier) below that commit; the new frontier passes it. One of this
# database that has written a synced row holds it, as before.
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
q() { "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" -c "$1"; }
fail() { echo "check failed: $*"; exit 1; }
OTHER_URL="${SQLTEST_OWNER_URL%/*}/postgres"
started() {
  for _ in $(seq 200); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND backend_xid IS NOT NULL")" = 1 ] && return 0
    sleep 0.05
  done
  fail "$1 did not take an xid"
}

q "CREATE SCHEMA ff; CREATE TABLE ff.items (id int PRIMARY KEY, x text);"
q "SELECT ferry.enable_sync('ff.items')" >/dev/null

# Another database: a write transaction left open for a while.
PGAPPNAME=ferry_ff_other "$PSQL" -X -q -v ON_ERROR_STOP=1 "$OTHER_URL" >/dev/null <<'SQL' &
BEGIN;
CREATE TEMP TABLE elsewhere (a int);
SELECT pg_sleep(4);
COMMIT;
SQL
other=$!
started ferry_ff_other
q "INSERT INTO ff.items VALUES (1, 'a')"
[ "$(q "SELECT _ferry_xid >= pg_snapshot_xmin(pg_current_snapshot()) FROM ff.items WHERE id = 1")" = t ] \
  || fail "the former frontier (xmin) is held below the commit by the other database's transaction"
[ "$(q "SELECT _ferry_xid < ferry.feed_frontier() FROM ff.items WHERE id = 1")" = t ] \
  || fail "the other database's transaction must not hold the feed's frontier"

# This database: a write transaction that has written a synced row holds it
# (one that has not never does since core 0032: Tests/SQL/19_feed_stamps.sh).
PGAPPNAME=ferry_ff_here "$PSQL" -X -q -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" >/dev/null <<'SQL' &
BEGIN;
INSERT INTO ff.items VALUES (3, 'c');
SELECT pg_sleep(3);
COMMIT;
SQL
here=$!
started ferry_ff_here
q "INSERT INTO ff.items VALUES (2, 'b')"
[ "$(q "SELECT _ferry_xid >= ferry.feed_frontier() FROM ff.items WHERE id = 2")" = t ] \
  || fail "a running writer of synced rows in this database holds the frontier"
[ "$(q "SELECT ferry.feed_frontier()::xid = (SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'ferry_ff_here')")" = t ] \
  || fail "the frontier is that writer's stamp (its xid: the floor was below it)"
wait $here || fail "the writer of this database failed"
wait $other || fail "the other database's transaction failed"
[ "$(q "SELECT bool_and(_ferry_xid < ferry.feed_frontier()) FROM ff.items")" = t ] \
  || fail "once both ended, everything is below the frontier"
echo "PASS 15_feed_frontier"

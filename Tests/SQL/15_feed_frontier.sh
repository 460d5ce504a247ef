#!/usr/bin/env bash
# role: owner
# ferry.feed_frontier() (core 0023): the feed waits for the running
# transactions of this database only. A write transaction of another database
# of the cluster, older than a commit here, held pg_snapshot_xmin (the former
# frontier) below that commit; the new frontier passes it. One of this
# database that has written a synced row holds it, as before.
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/_sessions.sh"
OTHER_URL="${SQLTEST_OWNER_URL%/*}/postgres"

q "CREATE SCHEMA ff; CREATE TABLE ff.items (id int PRIMARY KEY, x text); CREATE TABLE ff.release (done boolean);"
# The open transactions below stay open until the checks are done with them, not for
# a fixed time that a loaded machine could outlast (issue 49).
end_other() { q "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE application_name = 'ferry_ff_other'"; }
trap 'end_other >/dev/null 2>&1 || true' EXIT
q "SELECT ferry.enable_sync('ff.items')" >/dev/null

# Another database: a write transaction left open for a while.
PGAPPNAME=ferry_ff_other "$PSQL" -X -q -v ON_ERROR_STOP=1 "$OTHER_URL" >/dev/null <<'SQL' &
BEGIN;
CREATE TEMP TABLE elsewhere (a int);
SELECT pg_sleep(300);
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
PGAPPNAME=ferry_ff_here "$PSQL" -X -q -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" >/dev/null <<SQL &
BEGIN;
INSERT INTO ff.items VALUES (3, 'c');
$(until_released ff.release 'the writer')
COMMIT;
SQL
here=$!
started ferry_ff_here
q "INSERT INTO ff.items VALUES (2, 'b')"
[ "$(q "SELECT _ferry_xid >= ferry.feed_frontier() FROM ff.items WHERE id = 2")" = t ] \
  || fail "a running writer of synced rows in this database holds the frontier"
[ "$(q "SELECT ferry.feed_frontier()::xid = (SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'ferry_ff_here')")" = t ] \
  || fail "the frontier is that writer's stamp (its xid: the floor was below it)"
q "INSERT INTO ff.release VALUES (true)"
wait $here || fail "the writer of this database failed"
# The other database's transaction has served its purpose: end it (its psql then fails).
[ "$(end_other)" = 1 ] \
  || fail "the other database's transaction ended early"
wait $other || true
[ "$(q "SELECT bool_and(_ferry_xid < ferry.feed_frontier()) FROM ff.items")" = t ] \
  || fail "once both ended, everything is below the frontier"
echo "PASS 15_feed_frontier"

#!/usr/bin/env bash
# role: owner
# ferry.feed_hold() (core 0024): the transaction the feed's frontier stopped
# at, and its kind. Since core 0032 a transaction holds the frontier because it
# has stamped (its stamp's advisory lock), or, when the frontier falls back
# (the floor could not rise), because it is alive and advertises nothing; a
# table lock says neither. Each session below is active (in a statement), so
# that the lock-based kinds are told apart from idle_in_transaction.
# Before this file's fixes, four checks failed: statements of a synced table
# that wrote no row stamped (the notify trigger) and held the feed; an UPDATE
# and a DELETE that matched no synced row (RowExclusiveLock, no stamp) read
# `synced_writer` when the frontier fell back to them; a
# grant written by hand and a write to a synced table's partition (stamped,
# no RowExclusiveLock on a synced table) read `unsynced_writer`; and a
# frontier at the floor named no transaction (`ended` with the floor as xid).
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/_sessions.sh"

q "CREATE SCHEMA fh; CREATE TABLE fh.items (id int PRIMARY KEY, x text); CREATE TABLE fh.plain (a int);
   CREATE TABLE fh.parts (id int PRIMARY KEY, x text) PARTITION BY RANGE (id);
   CREATE TABLE fh.parts_low PARTITION OF fh.parts FOR VALUES FROM (0) TO (1000);
   CREATE TABLE fh.go (name text);"
q "SELECT ferry.enable_sync('fh.items')" >/dev/null
q "SELECT ferry.enable_sync('fh.parts')" >/dev/null
q "INSERT INTO fh.items VALUES (0, 'seed'); INSERT INTO fh.parts VALUES (1, 'seed');"
user=$(q "INSERT INTO ferry.users (name, password_hash) VALUES ('fh_user', 'x') RETURNING id")

pids=()
end_all() {
  q "INSERT INTO fh.go VALUES ('all')" >/dev/null 2>&1 || true
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
trap end_all EXIT

# A session that runs BODY in a transaction, then stays in a statement until released.
session() {
  PGAPPNAME="ferry_fh_$1" "$PSQL" -X -q -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" >/dev/null 2>&1 <<SQL &
BEGIN;
$2
$(until_released "fh.go WHERE name IN ('$1', 'all')" "$1")
COMMIT;
SQL
  pids+=($!)
  for _ in $(seq 400); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ferry_fh_$1' AND state = 'active' AND query LIKE 'DO %'")" = 1 ] && return 0
    sleep 0.05
  done
  fail "session $1 never reached its wait"
}
release() {
  q "INSERT INTO fh.go VALUES ('$1')"
  for _ in $(seq 400); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'ferry_fh_$1'")" = 0 ] && return 0
    sleep 0.05
  done
  fail "session $1 did not end"
}
xid_of() { q "SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'ferry_fh_$1'"; }
hold() { q "SELECT kind || ' ' || xid FROM ferry.feed_hold()"; }
# A commit after the session's xid, so that the frontier is below xmax.
commit_one() { q "INSERT INTO fh.items VALUES ($1, 'x')"; }
# The floor cannot rise while another session holds its raiser's lock: the frontier falls back.
# $1 names the session (a release is a row that stays: one name per session).
block_floor() { session "$1" "SELECT pg_advisory_lock(1181905530, 0);"; }
# While the floor cannot rise, a running transaction of another database (other
# test processes on the cluster) is not told apart from a silent writer of this
# one (the stamps' advisory keys are per database): one older than the session
# $1, or between the floor and its xid, may hold the frontier, or be named by
# the hold, for as long as it runs. Waits until the hold is "$2 <$1's xid>",
# asking again while it names a transaction of another database or one that
# has ended; any other answer fails at once.
hold_is() {
  local want got xid until=$((SECONDS + 300))
  want="$2 $(xid_of "$1")"
  while :; do
    got=$(hold)
    [ "$got" = "$want" ] && return 0
    xid=${got##* }
    [[ "$xid" =~ ^[0-9]+$ ]] || fail "the hold is not $want: '$got'"
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE backend_xid::text = '$xid' AND datname = current_database()")" = 0 ] \
      || fail "the hold names another transaction of this database, not $want: $got"
    [ "$SECONDS" -lt "$until" ] || fail "the hold named other databases' transactions for 300 s, not $want: $got"
    sleep 0.05
  done
}

# 0. Statements of a synced table that wrote no row (an UPDATE and an INSERT
#    ... SELECT that matched none: their statement triggers fire) stamp
#    nothing, so they never hold the feed. Before, the notify trigger stamped.
session u "INSERT INTO fh.plain VALUES (0); UPDATE fh.items SET x = x WHERE false; INSERT INTO fh.items SELECT 9, 'no' WHERE false;"
commit_one 100
[ -z "$(hold)" ] || fail "statements that wrote no synced row hold the feed: $(hold)"
release u

# 1. A synced write, still running: synced_writer.
session w "UPDATE fh.items SET x = 'w' WHERE id = 0;"
commit_one 1
[ "$(hold)" = "synced_writer $(xid_of w)" ] || fail "a running synced write reads: $(hold)"
release w

# 2. Stamped, with no RowExclusiveLock on a synced table: a grant written by
#    hand (as an unsynced table's trigger would), and a write straight into a
#    partition of a synced table. Both hold the frontier at their xid.
session g "INSERT INTO fh.plain VALUES (1); SELECT ferry.record_access_grant('$user', 'fh.items', '0');"
commit_one 2
[ "$(hold)" = "synced_writer $(xid_of g)" ] || fail "a transaction that recorded a grant reads: $(hold)"
release g
session p "INSERT INTO fh.parts_low VALUES (2, 'direct');"
[ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE a.application_name = 'ferry_fh_p' AND l.relation = 'fh.parts'::regclass AND l.mode = 'RowExclusiveLock'")" = 0 ] \
  || echo "note: the write to the partition also locked its parent"
commit_one 3
[ "$(hold)" = "synced_writer $(xid_of p)" ] || fail "a write to a synced table's partition reads: $(hold)"
release p

# 3. Written nothing synced, though it holds RowExclusiveLock on a synced table
#    (an UPDATE and a DELETE that matched no row) and a row lock (FOR UPDATE):
#    it holds the frontier only when the frontier falls back, and then it is
#    an unsynced_writer. Its xid is at or above the floor (taken after the
#    last raise), so the frontier is its xid.
block_floor floor1
session n "INSERT INTO fh.plain VALUES (2); UPDATE fh.items SET x = x WHERE false; DELETE FROM fh.items WHERE false;
           SELECT 1 FROM fh.items WHERE id = 0 FOR UPDATE;"
[ -n "$(xid_of n)" ] || fail "the unsynced writer has no xid"
[ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE a.application_name = 'ferry_fh_n' AND l.relation = 'fh.items'::regclass AND l.mode = 'RowExclusiveLock'")" = 1 ] \
  || fail "the no-op UPDATE did not take RowExclusiveLock (the case is moot)"
commit_one 4
# The hold first (another database's transaction may stop the frontier before
# n, hold_is above): once it names n, the frontier is n's xid, and stays so (a
# transaction that starts later has a larger xid).
hold_is n unsynced_writer
[ "$(q "SELECT ferry.feed_frontier() = '$(xid_of n)'::text::xid8")" = t ] || fail "the frontier did not fall back to the unsynced writer"
release floor1
release n

# 4. The frontier at the floor: a transaction alive and advertising nothing,
#    older than the floor, holds the frontier at the floor (what it will stamp
#    at least) when the floor cannot rise further. The floor is no running
#    transaction's xid; the hold names the transaction below it.
session f "INSERT INTO fh.plain VALUES (3);"
commit_one 5  # a snapshot's xmax is past the latest completed xid only
q "SELECT ferry.feed_frontier()" >/dev/null  # raises the floor past f's xid
block_floor floor2
commit_one 6
floor=$(q "SELECT pg_sequence_last_value('ferry.stamp_floor')")
[ "$(q "SELECT ferry.feed_frontier() = '$floor'::xid8 AND '$floor'::xid8 > '$(xid_of f)'::text::xid8")" = t ] \
  || fail "the frontier is not the floor above the idle writer: $(q "SELECT ferry.feed_frontier()::text || ' floor $floor f $(xid_of f) ' || pg_current_snapshot()::text")"
# The hold names the oldest running transaction below the floor: f, once
# another database's older one has ended (hold_is above).
hold_is f unsynced_writer
release floor2
release f

# Nothing holds it now.
commit_one 7
[ -z "$(hold)" ] || fail "something still holds the feed: $(hold)"
echo "PASS feed_hold"

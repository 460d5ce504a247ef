#!/usr/bin/env bash
# role: owner
# Stamps (core 0032): a transaction of this database that has written no
# synced row never holds the feed's frontier; one that writes its first synced
# row after the frontier passed its xid stamps at or above that frontier, and
# holds the frontier at its stamp until it ends, so nothing is missed.
# Before 0032 each "does not hold" check below failed: the frontier was the
# oldest running xid of this database.
# Run by run.sh with SQLTEST_OWNER_URL and PSQL set.
set -euo pipefail
q() { "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" -c "$1"; }
fail() { echo "check failed: $*"; exit 1; }
TMPD=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$TMPD"; }
trap cleanup EXIT

# A session driven statement by statement: `open NAME`, then `say NAME "SQL"`
# (each statement's output lands in $TMPD/NAME.out), `close NAME`.
open() {
  mkfifo "$TMPD/$1.in"
  PGAPPNAME="ferry_fs_$1" "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" <"$TMPD/$1.in" >"$TMPD/$1.out" 2>&1 &
  pids+=($!)
  eval "exec {fd_$1}>\"$TMPD/$1.in\""
}
say() { local fd="fd_$1"; echo "$2" >&"${!fd}"; }
close() { local fd="fd_$1"; eval "exec ${!fd}>&-"; }
# Waits until NAME's output has N lines (each step below prints one marker).
lines() {
  for _ in $(seq 400); do
    local n; n=$(grep -c . "$TMPD/$1.out" 2>/dev/null) || true
    [ "${n:-0}" -ge "$2" ] && return 0
    sleep 0.05
  done
  fail "session $1 did not reach step $2: $(cat "$TMPD/$1.out")"
}
xid_of() { q "SELECT backend_xid FROM pg_stat_activity WHERE application_name = 'ferry_fs_$1'"; }
# A committed synced write, and whether the frontier has passed it.
commit_one() { q "INSERT INTO fs.items VALUES ($1, 'x') RETURNING _ferry_xid"; }
passed() { q "SELECT bool_and(_ferry_xid < ferry.feed_frontier()) FROM fs.items WHERE id = $1"; }
# The same, allowing for a transaction of another test that ends between a
# frontier's snapshot and its look (held for that one computation, as 0023
# did): t as soon as one computation passes the row, f after 5 s.
passes() {
  for _ in $(seq 100); do [ "$(passed "$1")" = t ] && { echo t; return; }; sleep 0.05; done
  echo f
}

q "CREATE SCHEMA fs; CREATE TABLE fs.items (id int PRIMARY KEY, x text); CREATE TABLE fs.plain (a int); CREATE TABLE fs.other (a int);"
q "SELECT ferry.enable_sync('fs.items')" >/dev/null
q "INSERT INTO fs.items VALUES (0, 'seed')"

# 1. A transaction that wrote only a table that is not synced, idle in it.
open plain
say plain "BEGIN; INSERT INTO fs.plain VALUES (1); SELECT 'step1';"
lines plain 1
held=$(xid_of plain)
[ -n "$held" ] || fail "the unsynced writer has no xid"
commit_one 1 >/dev/null
[ "$(passes 1)" = t ] || fail "a transaction that wrote only an unsynced table held the frontier"
for _ in $(seq 100); do [ "$(q "SELECT ferry.feed_frontier() > '$held'::text::xid8")" = t ] && break; sleep 0.05; done
[ "$(q "SELECT ferry.feed_frontier() > '$held'::text::xid8")" = t ] || fail "the frontier did not pass the idle writer's xid"

# 2. A migration of a table that is not synced, and a row lock on a synced
#    row (`SELECT ... FOR UPDATE` takes an xid, and reads only), both idle.
open ddl
say ddl "BEGIN; ALTER TABLE fs.other ADD COLUMN b int; SELECT 1 FROM fs.items WHERE id = 1 FOR UPDATE; SELECT 'step1';"
lines ddl 2
commit_one 2 >/dev/null
[ "$(passes 2)" = t ] || fail "a migration of an unsynced table, or a row lock, held the frontier"

# 3. The promise: the idle transaction of step 1 now writes a synced row.
#    Its stamp is at or above every frontier computed before, and the
#    frontier stays at or below it until it commits.
before=$(q "SELECT ferry.feed_frontier()")
say plain "UPDATE fs.items SET x = 'late' WHERE id = 0 RETURNING _ferry_xid;"
lines plain 2
stamp=$(sed -n 2p "$TMPD/plain.out")
[ "$(q "SELECT '$stamp'::xid8 >= '$before'::xid8")" = t ] || fail "the late write stamped $stamp, below an earlier frontier $before"
[ "$(q "SELECT '$stamp'::xid8 > '$held'::text::xid8")" = t ] || fail "the late write kept its old xid as its stamp ($stamp)"
# The frontier falls back (docs/changes-feed.md, "A frontier that falls
# back"): it now stops at the writer's xid, below the earlier frontier,
# though the writer's stamp is above that frontier.
[ "$(q "SELECT ferry.feed_frontier() <= '$held'::text::xid8 AND '$before'::xid8 > '$held'::text::xid8")" = t ] \
  || fail "the frontier did not fall back to the late writer's xid (before: $before)"
commit_one 3 >/dev/null
[ "$(q "SELECT ferry.feed_frontier() <= '$stamp'::xid8")" = t ] || fail "the frontier passed a running writer's stamp"
[ "$(passed 3)" = f ] || fail "a commit after the late writer's stamp passed the frontier while it ran"
say plain "COMMIT; SELECT 'step3';"
lines plain 3
# Nothing missed: a reader whose cursor was `before` finds the late row in its
# next window [before, frontier), in its committed state.
passes 3 >/dev/null
[ "$(q "SELECT count(*) FROM fs.items WHERE id = 0 AND x = 'late' AND _ferry_xid >= '$before'::xid8 AND _ferry_xid < ferry.feed_frontier()")" = 1 ] \
  || fail "the late row is not in the window after the earlier frontier"
close plain

# 4. Between its two locks a stamping transaction advertises its xid: a
#    transaction holding only that first lock (taken here by hand) holds the
#    frontier at its xid.
open half
say half "BEGIN; INSERT INTO fs.plain VALUES (2); SELECT pg_advisory_xact_lock_shared(1181905529, ferry.stamp_key(pg_current_xact_id())); SELECT 'step1';"
lines half 1
half_xid=$(xid_of half)
commit_one 4 >/dev/null
[ "$(q "SELECT ferry.feed_frontier() <= '$half_xid'::text::xid8")" = t ] || fail "an advertised xid did not hold the frontier"
say half "ROLLBACK; SELECT 'step2';"
lines half 2
close half

# 5. A rolled-back savepoint takes its stamp and its locks with it; the next
#    synced write stamps again, and is advertised.
open sp
say sp "BEGIN; SAVEPOINT a; INSERT INTO fs.items VALUES (50, 'gone'); ROLLBACK TO SAVEPOINT a; SELECT 'step1';"
lines sp 1
[ "$(q "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid WHERE a.application_name = 'ferry_fs_sp' AND l.locktype = 'advisory'")" = 0 ] \
  || fail "a rolled-back savepoint left its stamp advertised"
commit_one 5 >/dev/null
[ "$(passes 5)" = t ] || fail "a transaction whose only synced write was rolled back held the frontier"
say sp "INSERT INTO fs.items VALUES (51, 'kept') RETURNING _ferry_xid;"
lines sp 2
sp_stamp=$(sed -n 2p "$TMPD/sp.out")
[ "$(q "SELECT ferry.feed_frontier() <= '$sp_stamp'::xid8")" = t ] || fail "the write after the savepoint is not advertised"
say sp "COMMIT; SELECT 'step3';"
lines sp 3
close sp

# 6. The console's read-only transaction cannot raise the floor: an idle
#    unsynced writer holds its frontier only up to the floor as it is, which
#    the feed's own computations keep raised; and it still never passes a
#    transaction that has stamped.
open idle2
say idle2 "BEGIN; INSERT INTO fs.plain VALUES (3); SELECT 'step1';"
lines idle2 1
idle2_xid=$(xid_of idle2)
commit_one 6 >/dev/null
[ "$(passes 6)" = t ] || fail "an idle unsynced writer held the frontier"
ro() { q "BEGIN READ ONLY; $1; ROLLBACK;" | grep -E '^(t|f)$'; }
[ "$(ro "SELECT ferry.feed_frontier() > '$idle2_xid'::text::xid8")" = t ] \
  || fail "a read-only frontier was held by an idle unsynced writer below the floor"
open stamped
say stamped "BEGIN; INSERT INTO fs.items VALUES (60, 'held'); SELECT 'step1';"
lines stamped 1
stamped_xid=$(xid_of stamped)
[ "$(ro "SELECT ferry.feed_frontier() <= '$stamped_xid'::text::xid8")" = t ] \
  || fail "a read-only frontier passed a transaction that has stamped"
say stamped "ROLLBACK; SELECT 'step2';"
lines stamped 2
close stamped
say idle2 "ROLLBACK; SELECT 'step2';"
lines idle2 2
close idle2
close ddl

# 8. A stamp taken from the floor (the transaction took its xid before a
#    frontier computation raised the floor past it) may equal xmax until some
#    larger xid completes; the frontier never passes xmax. It must not wait for
#    another commit: the next computation takes an xid, whose end moves xmax.
#    `from_floor NAME PLAIN COMMITTED WRITE`: session NAME takes an xid (an
#    unsynced row PLAIN), a synced commit (row COMMITTED) and a frontier
#    computation raise the floor past it, then it runs WRITE (a synced write
#    returning the row's stamp) and commits; its stamp is left in floor_stamp.
from_floor() {
  open "$1"
  say "$1" "BEGIN; INSERT INTO fs.plain VALUES ($2); SELECT 'step1';"
  lines "$1" 1
  local xid; xid=$(xid_of "$1")
  commit_one "$3" >/dev/null
  q "SELECT ferry.feed_frontier()" >/dev/null
  say "$1" "$4 RETURNING _ferry_xid; COMMIT; SELECT 'step2';"
  lines "$1" 3
  floor_stamp=$(sed -n 2p "$TMPD/$1.out")
  close "$1"
  [ "$(q "SELECT '$floor_stamp'::xid8 > '$xid'::text::xid8")" = t ] \
    || fail "the premise: $1's row was not stamped from the floor ($floor_stamp, xid $xid)"
}
from_floor late2 4 80 "INSERT INTO fs.items VALUES (81, 'floor')"
[ "$(passes 81)" = t ] || fail "a row stamped from the floor waited for another commit"

# 8b. The same for an UPDATE, whose generated trigger takes the stamp inline
#     (ferry.sync_update_source, issue 47): it records the stamp taken from the
#     floor in ferry.stamp_floor_taken as ferry.take_stamp() does (for
#     ferry.pass_floor_stamps), and the frontier does not wait for it.
commit_one 84 >/dev/null
from_floor late3 6 85 "UPDATE fs.items SET x = 'floor' WHERE id = 84"
[ "$(q "SELECT last_value >= '$floor_stamp'::text::int8 FROM ferry.stamp_floor_taken")" = t ] \
  || fail "the UPDATE did not record its stamp taken from the floor ($floor_stamp)"
[ "$(passes 84)" = t ] || fail "a row updated with a stamp from the floor waited for another commit"

# 9. One snapshot, one frontier: a REPEATABLE READ transaction reads the same
#    frontier in every statement, even when a transaction of its running set
#    ends between them (liveness is read as it is now; without the kept value
#    the second read fell to the ended transaction's xid).
open idle3
say idle3 "BEGIN; INSERT INTO fs.plain VALUES (5); SELECT 'step1';"
lines idle3 1
commit_one 90 >/dev/null
[ "$(passes 90)" = t ] || fail "an idle unsynced writer held the frontier"
open rr
say rr "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT ferry.feed_frontier();"
lines rr 1
say idle3 "COMMIT; SELECT 'step2';"
lines idle3 2
close idle3
say rr "SELECT ferry.feed_frontier(); COMMIT;"
lines rr 2
[ "$(sed -n 1p "$TMPD/rr.out")" = "$(sed -n 2p "$TMPD/rr.out")" ] \
  || fail "two statements of one snapshot read two frontiers: $(tr '\n' ' ' <"$TMPD/rr.out")"
close rr

# 10. A transaction that ends between a frontier's snapshot and its look:
#     committed, it may have stamped invisibly, so the frontier stops at its
#     xid; rolled back, nothing of it can ever appear, so it is passed (before
#     stop 25 that one read was held at its xid). The snapshot is a REPEATABLE
#     READ transaction's, taken before the writer ends; its first frontier is
#     computed after. `ended_between NAME END ID`: NAME writes synced row ID (it
#     advertises its stamp), the snapshot is taken, NAME runs END; prints the
#     frontier and NAME's xid.
ended_between() {
  open "$1"
  say "$1" "BEGIN; INSERT INTO fs.items VALUES ($3, 'ends'); SELECT 'step1';"
  lines "$1" 1
  local xid; xid=$(xid_of "$1")
  # A later xid completes first: a snapshot's xmax is the latest completed
  # xid's successor, so without it NAME's xid could be at xmax, not running in it.
  q "SELECT pg_current_xact_id()" >/dev/null
  open "rr_$1"
  say "rr_$1" "BEGIN ISOLATION LEVEL REPEATABLE READ; SELECT 'step1';"
  lines "rr_$1" 1
  say "$1" "$2; SELECT 'step2';"
  lines "$1" 2
  close "$1"
  say "rr_$1" "SELECT ferry.feed_frontier(); COMMIT;"
  lines "rr_$1" 2
  echo "$(sed -n 2p "$TMPD/rr_$1.out") $xid"
  close "rr_$1"
}
# Up to three tries: a transaction of another test that commits inside the
# window would hold that read below this one's xid, as it may.
for try in 1 2 3; do
  read -r f x <<<"$(ended_between "gone$try" ROLLBACK "10$try")"
  [ "$(q "SELECT '$f'::xid8 > '$x'::text::xid8")" = t ] && break
  [ "$try" = 3 ] && fail "a transaction rolled back after the snapshot held the frontier ($f) at its xid ($x)"
done
read -r f x <<<"$(ended_between kept COMMIT 110)"
[ "$(q "SELECT '$f'::xid8 <= '$x'::text::xid8")" = t ] \
  || fail "the frontier ($f) passed a transaction that stamped and committed after the snapshot ($x)"

# 7. Only the floor's raiser may set it, never above the next xid.
q "SELECT ferry.raise_stamp_floor((pg_snapshot_xmax(pg_current_snapshot())::text::int8 + 1000000)::text::xid8)" | grep -qx f \
  || fail "the floor rose above the next xid"
[ "$(q "SELECT last_value <= pg_snapshot_xmax(pg_current_snapshot())::text::int8 FROM ferry.stamp_floor")" = t ] \
  || fail "the floor is above the next xid"
echo "PASS 19_feed_stamps"

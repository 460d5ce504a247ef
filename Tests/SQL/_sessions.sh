# Sourced by the NN_*.sh SQL tests that hold sessions open beside their checks
# (07, 15). Needs PSQL and SQLTEST_OWNER_URL, as run.sh sets them.

# One statement as the owner, unaligned, tuples only.
q() { "$PSQL" -X -q -tA -v ON_ERROR_STOP=1 "$SQLTEST_OWNER_URL" -c "$1"; }
fail() { echo "check failed: $*"; exit 1; }

# Waits until the session named by application_name $1 has taken an xid (it has written).
started() {
  for _ in $(seq 200); do
    [ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = '$1' AND backend_xid IS NOT NULL")" = 1 ] && return 0
    sleep 0.05
  done
  fail "$1 did not take an xid"
}

# The SQL that keeps a transaction open until a row appears in the (unsynced) table $1:
# the checks release it when they are done with it, not after a fixed time that a
# loaded machine could outlast (issue 49). $2 names the session in the error.
until_released() {
  cat <<SQL
DO \$\$ BEGIN
  -- Each query here takes a new snapshot (READ COMMITTED), so the release is seen once committed.
  WHILE NOT EXISTS (SELECT FROM $1) LOOP
    IF pg_catalog.clock_timestamp() > pg_catalog.statement_timestamp() + interval '300 s' THEN
      RAISE EXCEPTION '$2 was never released';
    END IF;
    PERFORM pg_catalog.pg_sleep(0.02);
  END LOOP;
END \$\$;
SQL
}

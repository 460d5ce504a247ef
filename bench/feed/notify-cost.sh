#!/usr/bin/env bash
# What waking devices costs writers (issue 47, item 4): PATCH of one term
# (wrk write.lua) and POST of 100 terms (post100.lua) at 8 concurrent writers
# (wrk -t2 -c8), with the live wake-ups on (the hint triggers of core 0017
# enabled on every synced table) and off (disabled), the order alternating
# each round, beside `pgbench -b simple-update` (-c 8 -j 2) of the same
# minutes. PostgreSQL serialises the commits of transactions that NOTIFY
# through one lock on its notification queue. Since core 0026 a write through
# Ferry collects its hints instead and its instance sends them after the
# commit, batched (docs/changes-feed.md); "on" measures that whole path
# (triggers, collection, the outbox's NOTIFYs), "off" none of it, which is
# the bar "costs writers nothing measurable" (≥ 0.97). The statement that
# reads the collected hints back runs in both (it is part of the pipeline).
#
#   bench/feed/notify-cost.sh            BENCH_ROUNDS rounds (default 3), BENCH_DURATION each (default 10s)
#
# The data, servers and environment are bench/api/api.sh's (release build, 100,000
# terms in 1,000 sets). Run it on an idle machine: its figures are ratios of
# figures taken minutes apart.
source "$(dirname "${BASH_SOURCE[0]}")/../api/api.sh"

ROUNDS=${BENCH_ROUNDS:-3}
DURATION=${BENCH_DURATION:-10s}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

# wake_ups on|off: enables or disables the NOTIFY triggers (zz_ferry_notify_*) of every synced table,
# and the row hints functions (ferry.sync_hints_<oid>) with them.
wake_ups() {
  local verb=ENABLE; [ "$1" = off ] && verb=DISABLE
  psql_owner "$DB" -c "DO \$\$ DECLARE t record; BEGIN
    FOR t IN SELECT tg.tgrelid::regclass AS rel, tg.tgname FROM pg_trigger tg
              WHERE tg.tgname LIKE 'zz_ferry_notify_%' AND NOT tg.tgisinternal LOOP
      EXECUTE format('ALTER TABLE %s $verb TRIGGER %I', t.rel, t.tgname);
    END LOOP; END \$\$"
  # The row hints functions (issue 47 item 4), which a one-row PATCH's RETURNING calls
  # instead of the trigger's function: off, each collects nothing (a constant in the
  # inlined plan; replacing a function replans the statements that inlined it); on,
  # each as ferry migrate makes it again.
  if [ "$1" = off ]; then
    psql_owner "$DB" -c "DO \$\$ DECLARE f regprocedure; BEGIN
      FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
                WHERE p.pronamespace = 'ferry'::regnamespace AND p.proname ~ '^sync_hints_[0-9]+\$' LOOP
        EXECUTE format('CREATE OR REPLACE FUNCTION %s RETURNS boolean LANGUAGE sql VOLATILE AS %L', f, 'SELECT false');
      END LOOP; END \$\$"
  else
    psql_owner "$DB" -c "SELECT ferry.refresh_sync_notify(s.table_oid) FROM ferry.synced_tables s
                          WHERE to_regproc('ferry.sync_hints_' || s.table_oid::oid) IS NOT NULL"
  fi
}

CONNECTIONS=8
start_ferry
calibration_setup
trap 'wake_ups on >/dev/null 2>&1; cleanup' EXIT
echo "bench/feed/notify-cost.sh at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "an unknown commit"), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "8 writers (wrk -t2 -c8, pgbench -c 8 -j 2), $DURATION a figure, live wake-ups on and off alternating:"
echo
echo "| round | pgbench simple-update tps | PATCH/s on | PATCH/s off | PATCH on ÷ off | PATCH on ÷ simple-update | POST of 100/s on | POST of 100/s off | POST on ÷ off |"
echo "|---|---|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  : > "$WORK/results.r$round"
  u=$(pgbench -n -b simple-update -c 8 -j 2 -T "${DURATION%s}" "$OWNER/$CDB" 2>/dev/null | awk '/^tps/ {printf "%.0f", $3}')
  order="on off"; [ $((round % 2)) -eq 0 ] && order="off on"
  for state in $order; do
    wake_ups "$state" >/dev/null
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run "patch-$state" write.lua "r$round" 2>/dev/null
    BENCH_PATH=/v1/terms wrk_run "post-$state" post100.lua "r$round" 2>/dev/null
  done
  wake_ups on >/dev/null
  get() { awk -v n="$1" '$1==n {printf "%.0f", $2}' "$WORK/results.r$round"; }
  errors=$(grep -c "_errors" "$WORK/results.r$round" || true)
  [ "$errors" = 0 ] || echo "WARNING: round $round had error answers: $(grep _errors "$WORK/results.r$round" | tr '\n' ' ')" >&2
  echo "| $round | $u | $(get patch-on) | $(get patch-off) | $(ratio "$(get patch-on)" "$(get patch-off)") | $(ratio "$(get patch-on)" "$u") | $(get post-on) | $(get post-off) | $(ratio "$(get post-on)" "$(get post-off)") |"
done
calibration_drop >/dev/null

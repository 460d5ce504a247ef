#!/usr/bin/env bash
# What waking devices costs writers (issue 47, item 4): PATCH of one term
# (wrk write.lua) and POST of 100 terms (post100.lua) at 8 concurrent writers
# (wrk -t2 -c8), with the live wake-ups on (as `ferry migrate` makes them) and
# off (bench/api/api.sh's wake_ups off: no hint made anywhere, neither by the
# triggers nor by Ferry, whose one-row UPDATE then marks no row and returns no
# stamp; since stop 22, where "off" kept the statement's RETURNING call of the
# row mark function and its columns, which made off dearer), the order alternating
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
# Per figure (patch-on, …): its CPU seconds and its requests a second, summed over the rounds.
declare -A cpus reqs
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", a / b; else print "-" }'; }

# What the hints cost besides the writers' own transactions, counted around each PATCH run
# with them on: the NOTIFY transactions the hint sender made (/metrics), and the CPU of the
# hint path: ferry's two threads (ferry-hints: the sender, ferry-listen: the listener, which
# hears its own instance's NOTIFYs too) and their two PostgreSQL backends (by application_name).
hint_path_pids() {
  local tid
  for tid in /proc/"${SERVER_PIDS[0]}"/task/*; do
    case $(cat "$tid/comm" 2>/dev/null) in ferry-hints | ferry-listen) echo "${SERVER_PIDS[0]}/task/${tid##*/}" ;; esac
  done
  psql_owner postgres -At -c "SELECT pid FROM pg_stat_activity WHERE application_name IN ('ferry-hints', 'ferry-listen') AND datname = '$DB'"
}
# The CPU ticks (user + system) of /proc/<each argument>/stat.
proc_ticks() { local total=0 p; for p in "$@"; do total=$((total + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0))); done; echo "$total"; }

CONNECTIONS=8
start_ferry
calibration_setup
# A second of PATCHes first: the hint sender opens its connection at its first send.
BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk -t2 -c8 -d1s -s "$ROOT/bench/api/wrk/write.lua" "$BASE" >/dev/null
# BENCH_PEER=1: another instance's listener beside Ferry (a psql session named ferry-listen,
# LISTENing), so that Ferry sends its hints as it does beside other instances. By default it is
# alone and sends none (docs/changes-feed.md, "A lone instance sends nothing").
PEER_PID=
if [ "${BENCH_PEER:-0}" = 1 ]; then
  PGAPPNAME=ferry-listen psql -X -q "$OWNER/$DB" -c "LISTEN ferry_changes" -c "SELECT pg_sleep(86400)" >/dev/null 2>&1 &
  PEER_PID=$!
fi
trap 'wake_ups on >/dev/null 2>&1; [ -z "$PEER_PID" ] || kill "$PEER_PID" 2>/dev/null; cleanup' EXIT
echo "bench/feed/notify-cost.sh at $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo "an unknown commit"), $(date -u +%Y-%m-%dT%H:%MZ), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "8 writers (wrk -t2 -c8, pgbench -c 8 -j 2), $DURATION a figure, live wake-ups on and off alternating$([ -n "$PEER_PID" ] && echo ", another instance's listener beside it" || echo ", Ferry alone"):"
echo
echo "| round | pgbench simple-update tps | PATCH/s on | PATCH/s off | PATCH on ÷ off | PATCH on ÷ simple-update | POST of 100/s on | POST of 100/s off | POST on ÷ off | PATCHes a NOTIFY (on) | hint path's CPU µs a PATCH (on) | CPU µs a PATCH on / off | CPU µs a POST on / off |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
for round in $(seq 1 "$ROUNDS"); do
  : > "$WORK/results.r$round"
  u=$(simple_update_tps)
  order="on off"; [ $((round % 2)) -eq 0 ] && order="off on"
  for state in $order; do
    wake_ups "$state" >/dev/null
    # shellcheck disable=SC2207
    hint_pids=($(hint_path_pids)); n0=$(hint_notifies); t0=$(proc_ticks "${hint_pids[@]}")
    BENCH_PATH_PREFIX=/v1/terms/ BENCH_METHOD=PATCH wrk_run "patch-$state" write.lua "r$round" 2>/dev/null
    if [ "$state" = on ]; then
      notifies=$(( $(hint_notifies) - n0 )); ticks=$(( $(proc_ticks "${hint_pids[@]}") - t0 ))
    fi
    BENCH_PATH=/v1/terms wrk_run "post-$state" post100.lua "r$round" 2>/dev/null
  done
  wake_ups on >/dev/null
  get() { awk -v n="$1" '$1==n {printf "%.0f", $2}' "$WORK/results.r$round"; }
  # wrk_run's CPU a request, Ferry's + every postgres process's (its "<ferry>+<postgres>" summed).
  cpu() { awk -v n="$1" '$1==n {split($5, c, "+"); printf "%.0f", c[1] + c[2]}' "$WORK/results.r$round"; }
  errors=$(grep -c "_errors" "$WORK/results.r$round" || true)
  [ "$errors" = 0 ] || echo "WARNING: round $round had error answers: $(grep _errors "$WORK/results.r$round" | tr '\n' ' ')" >&2
  sums[0]=$(( ${sums[0]:-0} + $(get patch-on) )); sums[1]=$(( ${sums[1]:-0} + $(get patch-off) ))
  sums[2]=$(( ${sums[2]:-0} + $(get post-on) )); sums[3]=$(( ${sums[3]:-0} + $(get post-off) )); sums[4]=$(( ${sums[4]:-0} + u ))
  # The totals' CPU a request: each figure's CPU seconds (CPU a request × its requests) and rate.
  for k in patch-on patch-off post-on post-off; do
    cpus[$k]=$(awk -v a="${cpus[$k]:-0}" -v c="$(cpu "$k")" -v r="$(get "$k")" -v d="${DURATION%s}" 'BEGIN { printf "%.6f", a + c * r * d / 1e6 }')
    reqs[$k]=$(( ${reqs[$k]:-0} + $(get "$k") ))
  done
  echo "| $round | $u | $(get patch-on) | $(get patch-off) | $(ratio "$(get patch-on)" "$(get patch-off)") | $(ratio "$(get patch-on)" "$u") | $(get post-on) | $(get post-off) | $(ratio "$(get post-on)" "$(get post-off)") | $(awk -v r="$(get patch-on)" -v d="${DURATION%s}" -v n="$notifies" 'BEGIN { if (n > 0) printf "%.1f", r * d / n; else print "-" }') | $(awk -v r="$(get patch-on)" -v d="${DURATION%s}" -v t="$ticks" -v hz="$(getconf CLK_TCK)" 'BEGIN { if (r > 0) printf "%.1f", t / hz * 1e6 / (r * d); else print "-" }') | $(cpu patch-on) / $(cpu patch-off) | $(cpu post-on) / $(cpu post-off) |"
done
echo
echo "totals: PATCH on ${sums[0]} ÷ off ${sums[1]} = $(ratio "${sums[0]}" "${sums[1]}"), PATCH on ÷ simple-update $(ratio "${sums[0]}" "${sums[4]}"), POST of 100 on ${sums[2]} ÷ off ${sums[3]} = $(ratio "${sums[2]}" "${sums[3]}")"
# CPU a request over all rounds (Ferry's and PostgreSQL's): off ÷ on is what the wake-ups leave of a
# CPU-bound machine's throughput, less moved by the neighbours than the rates themselves.
per() { awk -v c="${cpus[$1]}" -v r="${reqs[$1]}" -v d="${DURATION%s}" 'BEGIN { if (r > 0) printf "%.0f", c * 1e6 / (r * d); else print "-" }'; }
echo "CPU µs a request, all rounds: PATCH on $(per patch-on) / off $(per patch-off) (off ÷ on $(ratio "$(per patch-off)" "$(per patch-on)")), POST of 100 on $(per post-on) / off $(per post-off) (off ÷ on $(ratio "$(per post-off)" "$(per post-on)"))"
calibration_drop >/dev/null

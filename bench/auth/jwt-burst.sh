#!/usr/bin/env bash
# bench/auth/jwt-burst.sh: a cached JWT's and a Ferry token's latency while the
# identity provider's JWKS endpoint hangs and a burst of tokens with unknown
# kids arrives (issue 51, item 1).
#
#   bench/auth/jwt-burst.sh          (BENCH_ROUNDS=3 BENCH_DURATION=10s, as bench/api/api.sh)
#
# Seeds bench/api/api.sh's data and starts a release Ferry that trusts one
# provider, bench/auth/jwt-burst-idp.py, whose JWKS URL serves one RSA key. A JWT
# of that key and a Ferry token name the same user, who owns the rows; both
# are verified once and then cached. Then the provider hangs: it accepts
# connections and never answers (fetch timeout 120 s, and an unknown kid
# starts the next fetch as soon as one times out). The burst is a second wrk, its own process: 10x the worker
# count of connections, each sending a token whose kid the JWKS never listed
# as soon as it has its answer, so the first starts a fetch that hangs, and
# the rest are refused (503 jwks_unavailable). The measured client is one
# connection GETting one term by id, one request at a time, alternately
# alone and under the burst, for each bearer, for BENCH_ROUNDS rounds.
# Prints each run and, per bearer, the median p99 under the burst over the
# median p99 alone. Everything shares this machine's cores: the burst's wrk
# and the server's refusals take CPU the measured requests would have had.
# Environment: as bench/api/api.sh; BENCH_IDP_PORT (default 18490); BENCH_HANG=0 for the
# control: the provider answers, so the burst's kids are refused 401
# token_unknown_key (a fetch at most every auth.jwks_min_refetch_seconds) and
# no fetch waits on a hanging provider.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../api" && pwd)/api.sh"

ISSUER=https://burst.test
ROUNDS=${BENCH_ROUNDS:-3}
IDP_PORT=${BENCH_IDP_PORT:-18490}

# wrk's latency (e.g. 812.00us, 1.25ms, 2.01s) in microseconds.
micros() { awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) print n; else if (v ~ /ms$/) print n * 1000; else if (v ~ /s$/) print n * 1e6; else print n }'; }

# measure NAME BEARER MODE: one connection's GETs for BENCH_DURATION; appends "NAME MODE req/s p50 p99 p99.9 burst" to results.burst.
measure() {
  local name=$1 bearer=$2 mode=$3 out burst_out="" burst_pid=""
  if [ "$mode" = burst ]; then
    BENCH_PATH=/v1/terms/$(head -n1 "$WORK/ids.txt") wrk -t1 -c"$BURST" -d"$(( ${DURATION%s} + 3 ))s" --timeout 30s \
      -s "$ROOT/bench/api/wrk/ghost.lua" "$BASE" > "$WORK/burst.out" 2>&1 &
    burst_pid=$!
    sleep 1
  fi
  out=$(BENCH_AUTH="Bearer $bearer" BENCH_PATH_PREFIX=/v1/terms/ wrk -t1 -c1 -d"$DURATION" --timeout 30s --latency \
    -s "$ROOT/bench/api/wrk/get.lua" "$BASE")
  echo "$out" >&2
  if echo "$out" | grep -q "Non-2xx or 3xx"; then echo "WARNING: $name $mode had error responses" >&2; fi
  local burst_rate=-
  if [ -n "$burst_pid" ]; then
    wait "$burst_pid"
    burst_out=$(cat "$WORK/burst.out")
    echo "burst: $burst_out" >&2
    burst_rate=$(echo "$burst_out" | awk '/Requests\/sec/ {print $2}')
    # Every burst request must have been refused (503, or 401 with BENCH_HANG=0), none served.
    local total refused
    total=$(echo "$burst_out" | awk '/requests in/ {print $1}')
    refused=$(echo "$burst_out" | awk '/Non-2xx or 3xx/ {print $NF}')
    [ "$total" = "${refused:-0}" ] || echo "WARNING: burst: $total requests, ${refused:-0} refused" >&2
  fi
  echo "$name $mode $(echo "$out" | awk '/Requests\/sec/ {print $2}') $(micros "$(echo "$out" | awk '/ 50%/ {print $2}')")" \
    "$(micros "$(echo "$out" | awk '/ 99%/ {print $2}')") $burst_rate" >> "$WORK/results.burst"
}

burst_main() {
  python3 "$ROOT/bench/auth/jwt-burst-idp.py" "$IDP_PORT" "$ISSUER" "$WORK" "$WORK/hang" >"$WORK/idp.log" 2>&1 &
  PIDS+=($!)
  for _ in $(seq 1 100); do [ -f "$WORK/idp.ready" ] && break; sleep 0.1; done
  [ -f "$WORK/idp.ready" ] || { echo "the identity provider did not start" >&2; exit 1; }
  export FERRY_AUTH_JWT_PROVIDERS="[{\"issuer\": \"$ISSUER\", \"audience\": \"ferry\", \"jwks_url\": \"http://127.0.0.1:$IDP_PORT/jwks\"}]"
  # A fetch that times out (120 s, the most allowed) is followed at once by the next
  # unknown kid's (no minimum between on-demand fetches), so the provider hangs throughout.
  # (The control, BENCH_HANG=0, keeps the default 30 s: its fetches succeed.)
  export FERRY_AUTH_JWKS_FETCH_TIMEOUT_SECONDS=120 BENCH_NO_CALIBRATION=1
  [ "${BENCH_HANG:-1}" = 0 ] || export FERRY_AUTH_JWKS_MIN_REFETCH_SECONDS=0
  start_ferry
  WORKERS=${FERRY_LISTEN_WORKER_THREADS:-$((2 * $(nproc)))}
  BURST=$((10 * WORKERS))
  local jid token hash jwt
  jid=$(psql_owner "$DB" -At -c "INSERT INTO ferry.users (id, issuer, subject) VALUES (ferry.external_user_id('$ISSUER', 'bench'), '$ISSUER', 'bench') RETURNING id")
  psql_owner "$DB" -c "UPDATE app.study_sets SET creator_id = '$jid'" -c "VACUUM ANALYZE app.study_sets" -c "VACUUM ANALYZE app.terms" >/dev/null
  token=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  hash=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
  psql_owner "$DB" -c "SELECT ferry.issue_token('$jid', '\\x$hash'::bytea, 86400)" >/dev/null
  jwt=$(cat "$WORK/jwt.txt")
  local first
  first=$(head -n1 "$WORK/ids.txt")
  for bearer in "$token" "$jwt"; do
    test "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/terms/$first" -H "Authorization: Bearer $bearer")" = 200 \
      || { echo "a bearer does not read the seeded rows" >&2; exit 1; }
    BENCH_AUTH="Bearer $bearer" warm_up /v1/terms/
  done
  # The provider hangs from now on; the first unknown kid starts the fetch that hangs.
  [ "${BENCH_HANG:-1}" = 0 ] || touch "$WORK/hang"
  local answer
  answer=$(curl -s -D - -o "$WORK/ghost.json" "$BASE/v1/terms/$first" -H "Authorization: Bearer $(head -n1 "$WORK/ghosts.txt")" | tr -d '\r')
  if [ "${BENCH_HANG:-1}" != 0 ]; then
    echo "$answer" | grep -q '^HTTP/1.1 503' && grep -q jwks_unavailable "$WORK/ghost.json" \
      || { echo "an unknown kid was not refused with 503 jwks_unavailable: $answer $(cat "$WORK/ghost.json")" >&2; exit 1; }
  fi
  # The server's own CPU while nothing is asked of it (the fetch hanging, unless BENCH_HANG=0).
  local t0 t1
  t0=$(cpu_ticks "${SERVER_PIDS[@]}"); sleep 5; t1=$(cpu_ticks "${SERVER_PIDS[@]}")
  IDLE_CPU=$(awk -v a="$t0" -v b="$t1" -v hz="$(getconf CLK_TCK)" 'BEGIN { printf "%.0f", (b - a) / hz / 5 * 100 }')
  for round in $(seq 1 "$ROUNDS"); do
    for mode in alone burst; do
      measure token "$token" "$mode"
      measure jwt "$jwt" "$mode"
    done
  done
  # Still hanging: the fetch the burst started has not finished.
  if [ "${BENCH_HANG:-1}" != 0 ] && grep -q "JWKS fetch failed" "$WORK/ferry.log"; then
    echo "NOTE: a JWKS fetch timed out during the run (after 120 s); the next unknown kid started another" >&2
  fi
  echo
  echo "GET one term by id, one connection, $ROUNDS rounds of $DURATION each, alone and under a burst of $BURST connections" \
    "($WORKERS workers) sending unknown kids, the JWKS $([ "${BENCH_HANG:-1}" = 0 ] && echo answering || echo hanging); load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "Ferry's CPU while idle before the rounds: ${IDLE_CPU}% of a core"
  echo
  echo "| round | bearer | mode | req/s | p50 us | p99 us | burst req/s (all refused) |"
  echo "|---|---|---|---|---|---|---|"
  awk '{ n[$1 $2]++; printf "| %d | %s | %s | %s | %.0f | %.0f | %s |\n", n[$1 $2], $1, $2, $3, $4, $5, $6 }' "$WORK/results.burst"
  awk '
    function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                     return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { k = ++count[$1, $2]; p99[$1, $2, k] = $5 + 0; p50[$1, $2, k] = $4 + 0 }
    END {
      split("token jwt", names, " ")
      for (b = 1; b <= 2; b++) {
        name = names[b]
        for (m = 1; m <= 2; m++) {
          mode = m == 1 ? "alone" : "burst"
          delete a; delete c
          for (k = 1; k <= count[name, mode]; k++) { a[k] = p99[name, mode, k]; c[k] = p50[name, mode, k] }
          q[mode] = median(a, count[name, mode]); h[mode] = median(c, count[name, mode])
        }
        printf "%s: median p99 %.0f us alone, %.0f us under the burst (x%.2f); median p50 %.0f / %.0f us (x%.2f)\n",
          name, q["alone"], q["burst"], q["burst"] / q["alone"], h["alone"], h["burst"], h["burst"] / h["alone"]
      }
    }' "$WORK/results.burst"
}
burst_main

#!/usr/bin/env bash
# bench/auth/jwt-cost.sh: what a JWT costs per request (issue 36, item 4), beside a
# Ferry token, side by side in one run.
#
#   bench/auth/jwt-cost.sh          (BENCH_ROUNDS=3 BENCH_DURATION=10s, as bench/api/api.sh)
#
# Seeds bench/api/api.sh's data (100,000 terms in 1,000 sets), starts a release
# Ferry that trusts one JWT provider (an HS256 secret), and gives the seeded
# rows to that provider's user "bench". Both bearers name that one user: a
# Ferry token issued for it, and a JWT for it. Then GET one term by id under
# wrk, alternating the two bearers for BENCH_ROUNDS rounds, so that drift on a
# shared machine hits both alike. The JWT is verified on its first request and
# cached until it expires; what is measured is the steady state. Prints each
# round and the JWT/token ratios of the medians (req/s and CPU per request).
# Environment: as bench/api/api.sh.
set -euo pipefail
source "$(cd "$(dirname "${BASH_SOURCE[0]}")/../api" && pwd)/api.sh"

ISSUER=https://bench.test
SECRET=bench-hs256-secret-of-at-least-32-bytes
ROUNDS=${BENCH_ROUNDS:-3}

mint_jwt() {
  JWT_ISSUER=$ISSUER JWT_SECRET=$SECRET python3 -c '
import base64, hashlib, hmac, json, os, time
b = lambda d: base64.urlsafe_b64encode(d).rstrip(b"=").decode()
now = int(time.time())
head = b(json.dumps({"alg": "HS256", "typ": "JWT"}).encode()) + "." + b(json.dumps(
    {"iss": os.environ["JWT_ISSUER"], "aud": "ferry", "sub": "bench", "iat": now, "exp": now + 86400,
     "email": "bench@example.com", "org_id": "acme", "roles": ["editor"]}).encode())
print(head + "." + b(hmac.new(os.environ["JWT_SECRET"].encode(), head.encode(), hashlib.sha256).digest()))'
}

jwt_main() {
  export FERRY_AUTH_JWT_PROVIDERS="[{\"issuer\": \"$ISSUER\", \"audience\": \"ferry\", \"secret\": \"$SECRET\"}]"
  export BENCH_NO_CALIBRATION=1
  start_ferry
  # The provider's user owns the rows; a Ferry token is issued for that same user.
  local jid token hash
  jid=$(psql_owner "$DB" -At -c "INSERT INTO ferry.users (id, issuer, subject) VALUES (ferry.external_user_id('$ISSUER', 'bench'), '$ISSUER', 'bench') RETURNING id")
  psql_owner "$DB" -c "UPDATE app.study_sets SET creator_id = '$jid'" -c "VACUUM ANALYZE app.study_sets" -c "VACUUM ANALYZE app.terms" >/dev/null
  token=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
  hash=$(printf %s "$token" | sha256sum | cut -d' ' -f1)
  psql_owner "$DB" -c "SELECT ferry.issue_token('$jid', '\\x$hash'::bytea, 86400)" >/dev/null
  local jwt
  jwt=$(mint_jwt)
  for bearer in "$token" "$jwt"; do
    test "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/v1/terms/$(head -n1 "$WORK/ids.txt")" -H "Authorization: Bearer $bearer")" = 200 \
      || { echo "a bearer does not read the seeded rows" >&2; exit 1; }
    BENCH_AUTH="Bearer $bearer" warm_up /v1/terms/
  done
  for round in $(seq 1 "$ROUNDS"); do
    BENCH_AUTH="Bearer $token" BENCH_PATH_PREFIX=/v1/terms/ wrk_run "token" get.lua cost
    BENCH_AUTH="Bearer $jwt" BENCH_PATH_PREFIX=/v1/terms/ wrk_run "jwt" get.lua cost
  done
  echo
  echo "GET one term by id, $ROUNDS rounds of $DURATION each, alternating; load average $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| round | bearer | req/s | p50 | p99 | CPU us/request (ferry+postgres) |"
  echo "|---|---|---|---|---|---|"
  awk '{ n[$1]++; printf "| %d | %s | %s | %s | %s | %s |\n", n[$1], $1, $2, $3, $4, $5 }' "$WORK/results.cost"
  awk '
    function median(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
                                     return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2 }
    { split($5, c, "+"); k = ++count[$1]; rate[$1, k] = $2 + 0; cpu[$1, k] = c[1] + c[2] }
    END {
      for (k = 1; k <= count["token"]; k++) { tr[k] = rate["token", k]; tc[k] = cpu["token", k] }
      for (k = 1; k <= count["jwt"]; k++) { jr[k] = rate["jwt", k]; jc[k] = cpu["jwt", k] }
      printf "\nmedian req/s: token %.0f, jwt %.0f (jwt/token %.3f); median CPU us/request: token %.0f, jwt %.0f (jwt/token %.3f)\n",
        median(tr, count["token"]), median(jr, count["jwt"]), median(jr, count["jwt"]) / median(tr, count["token"]),
        median(tc, count["token"]), median(jc, count["jwt"]), median(jc, count["jwt"]) / median(tc, count["token"])
    }' "$WORK/results.cost"
}
jwt_main

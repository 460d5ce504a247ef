#!/usr/bin/env bash
# Issue 46: a device subscribed to 10 of 100,000 public sets, at 1M terms: a
# poll takes <= 5 ms, and its first page <= 20 ms. At the HTTP level, against a
# release `ferry serve` of examples/study (its stream `set`, 0018, and public
# sets, 0019), seeded by SQL: SETS public sets of one creator, TERMS terms
# spread over them, and a device user who reads none of them but by subscription.
#
#   FERRY_BIN=.build/release/ferry bench/public-sets/public-poll.sh            100,000 sets, 1M terms
#   SETS=10000 TERMS=100000 FERRY_BIN=... bench/public-sets/public-poll.sh     a quick check
#
# Knobs: SETS (100000), TERMS (1000000), SUBSCRIBED (10, the device's
# subscriptions), ROUNDS (200, polls of each), FIRSTS (200, first pages of
# distinct random sets). Without FERRY_BIN it builds ferry in release.
#
# Prints, per request over one keep-alive connection (timed by the client, so
# HTTP parsing and JSON included): a subscription's first page (no `since`,
# `limit=500`: the set and its terms); a poll of one subscription with nothing
# new (`since=<its cursor>`, 200 and no changes), and the same as the "any
# activity?" check (`If-None-Match: "<cursor>"`, 304); and a device's whole poll
# round (its SUBSCRIBED checks and the default stream's). Then the statements
# PostgreSQL executed for one first page and one poll, as ferry_app with Row
# Level Security, logged by auto_explain (ANALYZE, BUFFERS) and filtered to
# their scan lines and timings. Each figure is client time; nothing else
# should run on the machine (`uptime` is printed with it).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
SETS=${SETS:-100000}
TERMS=${TERMS:-1000000}
SUBSCRIBED=${SUBSCRIBED:-10}
ROUNDS=${ROUNDS:-200}
FIRSTS=${FIRSTS:-200}
source bench/lib.sh
bench_binary
bench_database bench_public_poll

# The superuser, for auto_explain (the dev cluster of deploy/local.sh trusts its socket).
SOCK=${FERRY_LOCAL_DIR:-$ROOT/.local}/run
PGLOG=$SOCK/postgres.log
as_pg() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
psql_su() { as_pg psql -X -q -h "$SOCK" -p "${FERRY_PG_PORT:-54329}" -U postgres -d "$BENCH_DB" "$@"; }

seeding=$(date +%s)
bench_seed_public -v sets="$SETS" -v terms="$TERMS" <<'SQL'
INSERT INTO app.study_sets (creator_id, title, is_public)
SELECT (SELECT id FROM ferry.users WHERE name = 'creator'), 'public ' || s, true FROM generate_series(1, :sets) s;
-- TERMS terms, as evenly as they go over the sets (10 each at the defaults).
INSERT INTO app.terms (set_id, word, definition, rank)
SELECT s.id, 'word ' || i, 'a definition of some length for row ' || i, 'r' || lpad(i::text, 6, '0') || 'V'
  FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM app.study_sets) s
  CROSS JOIN LATERAL generate_series(1, (:terms / :sets) + CASE WHEN s.n <= :terms % :sets THEN 1 ELSE 0 END) i;
SQL
echo "seeded $SETS public sets and $(psql -X -tA "$FERRY_DATABASE_MIGRATION_URL" -c 'SELECT count(*) FROM app.terms') terms in $(( $(date +%s) - seeding )) s"

bench_serve
bench_token device bench
SAMPLE=$(( SUBSCRIBED + FIRSTS ))
IDS=$(psql -X -tA "$FERRY_DATABASE_MIGRATION_URL" -c "SELECT string_agg(id::text, ',') FROM (SELECT id FROM app.study_sets ORDER BY random() LIMIT $SAMPLE) s")
bench_await_feed "stream=set:${IDS%%,*}" '"resource":"study_sets"'

echo "load before measuring: $(uptime)"
python3 - "$PORT" "$TOKEN" "$IDS" "$SUBSCRIBED" "$ROUNDS" <<'PY'
import http.client, json, sys, time
port, token, ids, subscribed, rounds = int(sys.argv[1]), sys.argv[2], sys.argv[3].split(","), int(sys.argv[4]), int(sys.argv[5])
mine, others = ids[:subscribed], ids[subscribed:]
conn = http.client.HTTPConnection("127.0.0.1", port)
auth = {"Authorization": "Bearer " + token}

def get(path, headers={}):
    start = time.perf_counter()
    conn.request("GET", path, headers={**auth, **headers})
    response = conn.getresponse()
    body = response.read()
    elapsed = (time.perf_counter() - start) * 1000
    if response.status not in (200, 304):
        sys.exit(f"{path}: {response.status} {body[:300]!r}")
    return elapsed, response.status, (json.loads(body) if body else None)

def summary(name, values, unit="requests"):
    values = sorted(values)
    pick = lambda p: values[min(len(values) - 1, int(p * len(values)))]
    print(f"public-poll: {name}: p50 {pick(0.5):.2f} ms, p90 {pick(0.9):.2f} ms, p99 {pick(0.99):.2f} ms, max {values[-1]:.2f} ms ({len(values)} {unit})")

stream = lambda set_id: "/v1/changes?limit=500&stream=set:" + set_id
# Warm the connection and the plans (ferry prepares its statements per connection).
for set_id in mine: get(stream(set_id))
firsts, sizes = [], []
for set_id in others:
    elapsed, _, page = get(stream(set_id))
    firsts.append(elapsed); sizes.append(len(page["changes"]))
cursors = {set_id: get(stream(set_id))[2]["cursor"] for set_id in mine}
default = get("/v1/changes?limit=500")[2]
assert not default["changes"], "the device's default stream holds no public set"
polls, checks, device, waits = [], [], [], []
wait_body = json.dumps({"wait": 0, "since": {"default": default["cursor"], **{"set:" + i: cursors[i] for i in mine}}})
for _ in range(rounds):
    round_start = time.perf_counter()
    for set_id in mine:
        elapsed, status, page = get(stream(set_id) + "&since=" + cursors[set_id])
        assert status == 200 and not page["changes"], page
        polls.append(elapsed)
    get("/v1/changes?limit=500&since=" + default["cursor"])
    device.append((time.perf_counter() - round_start) * 1000)
    for set_id in mine:
        elapsed, status, _ = get(stream(set_id) + "&since=" + cursors[set_id], {"If-None-Match": '"' + cursors[set_id] + '"'})
        assert status == 304, status
        checks.append(elapsed)
    # The same question in one request: which of the device's streams have news (docs/API.md,
    # "One wait for several streams"), as a device asks before it fetches only those.
    start = time.perf_counter()
    conn.request("POST", "/v1/changes/wait", body=wait_body, headers={**auth, "Content-Type": "application/json"})
    response = conn.getresponse()
    answer = json.loads(response.read())
    waits.append((time.perf_counter() - start) * 1000)
    assert response.status == 200 and answer == {"changed": []}, (response.status, answer)
print(f"public-poll: {len(others)} first pages of distinct sets, {min(sizes)}-{max(sizes)} entries each")
summary("first page of a subscription (no since, limit=500)", firsts)
summary("poll of one subscription, nothing new (200)", polls)
summary("poll of one subscription as If-None-Match (304)", checks)
summary(f"a device's poll round: {subscribed} subscriptions and its default stream, 200s", device, "rounds")
summary(f"one POST /v1/changes/wait (wait 0) for the {subscribed} subscriptions and the default stream", waits)
PY
echo "load after measuring: $(uptime)"

# The executed statements, as ferry_app under RLS: auto_explain on this database,
# for the connections of a new ferry serve.
psql_su -c "ALTER DATABASE $BENCH_DB SET session_preload_libraries = 'auto_explain'" \
        -c "ALTER DATABASE $BENCH_DB SET auto_explain.log_min_duration = 0" \
        -c "ALTER DATABASE $BENCH_DB SET auto_explain.log_analyze = on" \
        -c "ALTER DATABASE $BENCH_DB SET auto_explain.log_buffers = on"
bench_serve
bench_token device bench
ONE=${IDS%%,*}
curl -sf "$BASE/v1/changes?limit=500&stream=set:$ONE" -H "Authorization: Bearer $TOKEN" >/dev/null   # plans prepared
sleep 0.5   # its statements are in the log
mark=$(as_pg wc -c < "$PGLOG")
CURSOR=$(curl -sf "$BASE/v1/changes?limit=500&stream=set:$ONE" -H "Authorization: Bearer $TOKEN" | python3 -c 'import json,sys; print(json.load(sys.stdin)["cursor"])')
sleep 0.5
first_end=$(as_pg wc -c < "$PGLOG")
curl -sf "$BASE/v1/changes?limit=500&stream=set:$ONE&since=$CURSOR" -H "Authorization: Bearer $TOKEN" >/dev/null
sleep 0.5
PLANS=${PLANS:-$(mktemp /tmp/public-poll-plans.XXXXXX)}
# Each top-level statement of the request: its time, its text's start, its
# executed index scans (with their rows), the whole plan's buffers; the full plans go to $PLANS.
PLAN_SUMMARY=$(cat <<'PY'
import re, sys
for block in re.split(r"\n(?=\S.*LOG:  duration: )", sys.stdin.read()):
    head = re.search(r"duration: ([0-9.]+) ms", block)
    if not head:
        continue
    text = re.search(r"Query Text: (.*)", block)
    query = " ".join((text.group(1) if text else "?").split())[:90]
    print(f"  {head.group(1)} ms: {query}")
    if float(head.group(1)) < 0.05:
        continue
    buffers = re.search(r"Buffers: shared ([^\n]*)", block)
    print("    the statement: shared " + (buffers.group(1) if buffers else "(no buffers)"))
    for line in block.splitlines():
        if "never executed" in line:
            continue
        scan = re.search(r"(Index Only Scan|Index Scan|Seq Scan|Bitmap \w+ Scan)( using \S+)? on (\S+).*actual time=[0-9.]+\.\.([0-9.]+) rows=(\d+) loops=(\d+)", line)
        if scan:
            print(f"    {scan.group(1)}{scan.group(2) or ''} on {scan.group(3)}: rows={scan.group(5)} loops={scan.group(6)} time={scan.group(4)} ms")
PY
)
plans() { as_pg tail -c +"$(( $1 + 1 ))" "$PGLOG" 2>/dev/null | head -c "$(( $2 - $1 ))" | tee -a "$PLANS" | python3 -c "$PLAN_SUMMARY"; }
echo "executed statements of one first page (auto_explain, as ferry_app under RLS):"
plans "$mark" "$first_end"
echo "executed statements of one poll:"
plans "$first_end" "$(as_pg wc -c < "$PGLOG")"
echo "(full plans: $PLANS)"
psql_su -c "ALTER DATABASE $BENCH_DB RESET ALL"

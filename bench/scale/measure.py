#!/usr/bin/env python3
"""bench/scale: one size's operations against a running ferry serve.

  measure.py URL cursor            the reader's since=now cursor (before access changes)
  measure.py URL run CURSOR SIZE [OWNER_URL]
                                   p50/p99 of each operation, as one JSON line; with
                                   OWNER_URL, last, the reader's poll after every row
                                   they may not see was rewritten (psql as the owner)

Sequential requests on one keep-alive connection (http.client), so each figure
is one request's latency with nothing queued behind it.
"""
import base64, http.client, json, subprocess, sys, time, uuid
from urllib.parse import urlparse

URL = urlparse(sys.argv[1])


def connect():
    return http.client.HTTPConnection(URL.hostname, URL.port, timeout=120)


def call(conn, method, path, token=None, body=None, headers=None):
    h = dict(headers or {})
    if token:
        h["Authorization"] = "Bearer " + token
    data = None
    if body is not None:
        data = json.dumps(body).encode()
        h["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=h)
    r = conn.getresponse()
    payload = r.read()
    return r.status, dict((k.lower(), v) for k, v in r.getheaders()), payload


def sign_in(conn, name):
    basic = base64.b64encode(f"{name}:bench".encode()).decode()
    status, _, body = call(conn, "POST", "/v1/auth/token", headers={"Authorization": "Basic " + basic})
    assert status == 201, (status, body)
    return json.loads(body)["token"]


def timed(conn, n, fn, expect):
    samples = []
    for i in range(n):
        start = time.perf_counter()
        status, _, body = fn(conn, i)
        samples.append((time.perf_counter() - start) * 1000)
        assert status in expect, (status, expect, body[:300])
    samples.sort()
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))]
    return {"p50": round(pick(0.50), 3), "p99": round(pick(0.99), 3), "n": n}


def main():
    conn = connect()
    reader = sign_in(conn, "reader")
    if sys.argv[2] == "cursor":
        status, _, body = call(conn, "GET", "/v1/changes?since=now", reader)
        assert status == 200, body
        print(json.loads(body)["cursor"])
        return
    before, size = sys.argv[3], int(sys.argv[4])
    big = sign_in(conn, "big")
    _, _, body = call(conn, "GET", "/v1/changes?since=now", reader)
    frontier = json.loads(body)["cursor"]
    _, _, body = call(conn, "GET", "/v1/study_sets?title=reader%20read", reader)
    read_set = json.loads(body)["data"][0]["id"]
    _, _, body = call(conn, "GET", "/v1/study_sets?title=reader%20write", reader)
    write_set = json.loads(body)["data"][0]["id"]
    _, _, body = call(conn, "GET", f"/v1/terms?set_id={read_set}", reader)
    term_ids = [t["id"] for t in json.loads(body)["data"]]
    _, _, body = call(conn, "GET", f"/v1/terms?set_id={write_set}", reader)
    patch_ids = [t["id"] for t in json.loads(body)["data"]]
    _, _, body = call(conn, "GET", f"/v1/changes?since={before}&limit=500", reader)
    page = json.loads(body)
    results = {"size": size, "page_rows": len(page["changes"]), "page_has_more": page["has_more"]}

    results["changes page (500 rows)"] = timed(conn, 100, lambda c, i: call(c, "GET", f"/v1/changes?since={before}&limit=500", reader), {200})
    results["empty poll (304)"] = timed(conn, 300, lambda c, i: call(
        c, "GET", f"/v1/changes?since={frontier}", reader, headers={"If-None-Match": f'"{frontier}"'}), {304})
    results["Index page 1, 100-row set"] = timed(conn, 200, lambda c, i: call(c, "GET", f"/v1/terms?set_id={read_set}", reader), {200})
    _, _, body = call(conn, "GET", "/v1/terms?limit=100", big)
    results["snapshot_rows"] = json.loads(body)["paging"]["total"]
    results["Index page 1 of the big snapshot"] = timed(conn, 20, lambda c, i: call(c, "GET", "/v1/terms?limit=100", big), {200})
    try:
        huge = sign_in(conn, "huge")
        _, _, body = call(conn, "GET", "/v1/terms?limit=100", huge)
        if json.loads(body)["paging"]["total"] >= 100000:
            results["huge_snapshot_rows"] = json.loads(body)["paging"]["total"]
            results["huge_snapshot"] = timed(conn, 10, lambda c, i: call(c, "GET", "/v1/terms?limit=100", huge), {200})
    except AssertionError:
        pass
    results["GET by id"] = timed(conn, 300, lambda c, i: call(c, "GET", f"/v1/terms/{term_ids[i % len(term_ids)]}", reader), {200})
    results["PATCH"] = timed(conn, 200, lambda c, i: call(
        c, "PATCH", f"/v1/terms/{patch_ids[i % len(patch_ids)]}", reader, {"word": f"w{i}"}, {"If-Match": "*"}), {200})
    results["POST of 100"] = timed(conn, 30, lambda c, i: call(c, "POST", "/v1/terms", reader, [
        {"id": str(uuid.uuid4()), "set_id": write_set, "word": f"n{i}-{k}", "rank": f"n{i:03d}{k:03d}V"} for k in range(100)]), {201})
    # A reader's first page of a full sync, from the start: their own sets and
    # the 100 sets shared with them, among everyone's rows.
    results["first page from the start (100 rows)"] = timed(conn, 50, lambda c, i: call(
        c, "GET", "/v1/changes?limit=100", reader), {200})
    # Issue 34's collaborator: 20 sets shared with them, none of their own.
    collaborator = sign_in(conn, "collaborator")
    results["a collaborator of 20 sets: first page from the start (100 rows)"] = timed(conn, 50, lambda c, i: call(
        c, "GET", "/v1/changes?limit=100", collaborator), {200})
    # An owner of many sets syncing through the feed from the start (FerryKit
    # syncs first through Index): each set of theirs is a key of the terms'
    # read path, so the page reads up to a page per set.
    results["big user's first page from the start (500 rows)"] = timed(conn, 20, lambda c, i: call(
        c, "GET", "/v1/changes?limit=500", big), {200})
    if "huge_snapshot" in results:
        results["huge_first_feed_page"] = timed(conn, 5, lambda c, i: call(c, "GET", "/v1/changes?limit=500", huge), {200})
    if len(sys.argv) > 5:
        # Every term of the other users' sets that the reader may not see is
        # rewritten after the reader's cursor; their poll then has nothing.
        _, _, body = call(conn, "GET", "/v1/changes?since=now", reader)
        quiet = json.loads(body)["cursor"]
        start = time.perf_counter()
        rewritten = subprocess.run(["psql", "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1", sys.argv[5], "-c", """
            WITH r AS (SELECT id FROM ferry.users WHERE name = 'reader'),
                 seen AS (SELECT c.set_id FROM app.set_collaborators c, r WHERE c.user_id = r.id AND NOT c.is_deleted),
                 u AS (UPDATE app.terms t SET definition = t.definition || '.' FROM app.study_sets s, r
                        WHERE s.id = t.set_id AND s.creator_id <> r.id AND s.id NOT IN (SELECT set_id FROM seen) RETURNING 1)
            SELECT count(*) FROM u"""], check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        results["invisible_changes"] = int(rewritten)
        results["invisible_rewrite_s"] = round(time.perf_counter() - start, 1)
        results["poll after the invisible changes (304)"] = timed(conn, 300, lambda c, i: call(
            c, "GET", f"/v1/changes?since={quiet}", reader, headers={"If-None-Match": f'"{quiet}"'}), {304})
    print(json.dumps(results))


if __name__ == "__main__":
    main()

"""Issue 34's live-feed figures against one `ferry serve` (bench/live/run.sh starts it).

    live.py PORT SERVER_PID WRITER_TOKEN READER_TOKEN BYSTANDER_TOKEN SET_ID WAITERS...
    live.py idle PORT SERVER_PID TOKEN SECONDS WAITERS...
    live.py fanout PORT SERVER_PID WRITER_TOKEN READER_TOKEN SET_ID WAITERS...
    live.py teacher PORT SERVER_PID WRITER_TOKEN SET_ID STUDENTS...

For each count N of WAITERS (e.g. 1 1000 10000):
- latency: N-1 long polls of a bystander (a user who cannot see the set) wait
  beside device B (the reader, the set's collaborator), which loops on a long
  poll; the writer adds a term to the set 16 times a second, 200 times. The
  time from each write's answer to B's long poll answering with that term:
  p50, p99 (client and server on the same cores).
- memory: the server's RSS growth per waiting long poll, with the N waiting.
- idle CPU: the server's CPU time over 20 s with the N waiting and no writes,
  once they are parked (the server's CPU has settled).
- fan-out: N long polls of the reader (devices of the set's collaborator) and
  one write: the time from the write's answer until every one has its answer.
And once, the same latency for a device that polls every second instead.

`fanout` measures only the fan-out, twice for each N: N long polls of the
reader's one token (the same question: one shared check, issue 46), and N
collaborators of the set with a token each (users fan-1..fan-N, made by
run.sh, tokens "fanout-bench-token-<i>": a check each).

`teacher` measures a teacher's set followed by a class (issue 46): STUDENTS
users (fan-1..N, as for `fanout`) each follow the set's stream with their own
token, by event stream or by a long poll re-sent after every answer, as a
device in continuous mode does; the writer (the teacher) adds 200 terms at 16
a second. Commit to device: the time from each write's answer to each
student's answer holding that term, p50 / p99 / max over every (student,
term) pair, and how many never arrived. bench/live/teacher.py runs it and
says how answers are stamped.

`idle` measures only the server's CPU over SECONDS with each count of long
polls waiting (0 included) and nothing written: what parked waiters cost a
server that has nothing to say.

Each figure is also appended, one JSON object a line, to $BENCH_LIVE_RESULTS
when set (bench/live/run.sh sets it), labelled $BENCH_LIVE_LABEL, for
bench/live/plot.py.
"""
import json, os, selectors, socket, sys, threading, time

HOST = "127.0.0.1"


def request(path, token, method="GET", body=None, headers=()):
    lines = [f"{method} {path} HTTP/1.1", "Host: bench", f"Authorization: Bearer {token}"]
    lines += list(headers)
    data = b""
    if body is not None:
        data = json.dumps(body).encode()
        lines += ["Content-Type: application/json", f"Content-Length: {len(data)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + data


class Conn:
    """One keep-alive connection, one request at a time."""

    def __init__(self, port):
        self.sock = socket.create_connection((HOST, port))
        self.buffer = b""

    def send(self, raw):
        self.sock.sendall(raw)

    def answer(self):
        while b"\r\n\r\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("connection closed")
            self.buffer += chunk
        head, _, rest = self.buffer.partition(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        status = int(lines[0].split()[1])
        headers = {k.lower(): v.strip() for k, _, v in (l.partition(":") for l in lines[1:])}
        length = int(headers.get("content-length", "0"))
        while len(rest) < length:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise SystemExit("connection closed in a body")
            rest += chunk
        self.buffer = rest[length:]
        return status, headers, rest[:length]

    def call(self, raw):
        self.send(raw)
        return self.answer()


def now_cursor(port, token, stream=None):
    c = Conn(port)
    status, _, body = c.call(request("/v1/changes?since=now" + (f"&stream={stream}" if stream else ""), token))
    c.sock.close()
    assert status == 200, status
    return json.loads(body)["cursor"]


def long_poll(cursor, token, wait, stream=None):
    path = f"/v1/changes?since={cursor}&wait={wait}&limit=500" + (f"&stream={stream}" if stream else "")
    return request(path, token, headers=[f'If-None-Match: "{cursor}"'])


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")


def live_counters(port):
    """The server's live counters from /metrics (wakes, checks, holds, hints): read around a
    run, their difference says what the run cost and whether waiters waited for the frontier."""
    import urllib.request
    counters = {}
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        for line in answer.read().decode().splitlines():
            name, _, value = line.partition(" ")
            if name.startswith("ferry_live_") and name.endswith("_total"):
                counters[name[len("ferry_live_"):-len("_total")]] = float(value)
    return counters


def counter_deltas(before, after):
    return ", ".join(f"{int(after[k] - before.get(k, 0))} {k}" for k in ("wakes", "checks", "holds") if k in after)


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def settle(pid, below=5.0, most=60):
    """Waits (at most `most` s) until the server uses under `below` % of a core
    over 2 s: until it has parked every waiter sent it, each after a first check
    of the feed on a worker, so that an idle figure is of waiting, not of parking."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        cpu0 = cpu_seconds(pid)
        time.sleep(2)
        if (cpu_seconds(pid) - cpu0) / 2 * 100 < below:
            return


def open_waiters(port, token, count, wait=120):
    """count long polls of one user, each on its own connection, all sent."""
    cursor = now_cursor(port, token)
    conns = []
    raw = long_poll(cursor, token, wait)
    for i in range(count):
        c = Conn(port)
        c.send(raw)
        conns.append(c)
    return conns


def close_all(conns):
    for c in conns:
        c.sock.close()


def record(kind, **fields):
    """Appends one figure to $BENCH_LIVE_RESULTS, if set."""
    path = os.environ.get("BENCH_LIVE_RESULTS")
    if not path:
        return
    fields = {"kind": kind, "label": os.environ.get("BENCH_LIVE_LABEL", "ferry"),
              "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "load": round(os.getloadavg()[0], 2), **fields}
    with open(path, "a") as f:
        f.write(json.dumps(fields) + "\n")


def percentile(values, p):
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def latency(port, writer, reader, set_id, writes=200, rate=16, poll_every=None):
    """Write `writes` terms at `rate` a second; B long-polls (or polls every `poll_every` s)."""
    answered = {}   # term id -> when the writer had the answer
    arrived = {}    # term id -> when B had it
    done = threading.Event()

    def device_b():
        conn = Conn(port)
        cursor = now_cursor(port, reader)
        while not done.is_set():
            if poll_every is None:
                status, _, body = conn.call(long_poll(cursor, reader, 30))
            else:
                time.sleep(poll_every)
                status, _, body = conn.call(request(f"/v1/changes?since={cursor}&limit=500", reader,
                                                    headers=[f'If-None-Match: "{cursor}"']))
            at = time.monotonic()
            if status == 200:
                page = json.loads(body)
                cursor = page["cursor"]
                for change in page["changes"]:
                    if change["resource"] == "terms":
                        arrived.setdefault(change["data"]["id"], at)
            elif status != 304:
                raise SystemExit(f"B's poll answered {status}: {body[:200]!r}")

    thread = threading.Thread(target=device_b, daemon=True)
    thread.start()
    time.sleep(0.5)
    conn = Conn(port)
    start = time.monotonic()
    for i in range(writes):
        due = start + i / rate
        pause = due - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        status, _, body = conn.call(request("/v1/terms", writer, "POST", {"set_id": set_id, "word": f"w{i}", "rank": "last"}))
        at = time.monotonic()
        if status != 201:
            raise SystemExit(f"write answered {status}: {body[:200]!r}")
        answered[json.loads(body)["id"]] = at
    deadline = time.monotonic() + 10 + (poll_every or 0)
    while len(arrived.keys() & answered.keys()) < len(answered) and time.monotonic() < deadline:
        time.sleep(0.05)
    done.set()
    missing = len(answered) - len(arrived.keys() & answered.keys())
    ms = [(arrived[i] - answered[i]) * 1000 for i in answered if i in arrived]
    return percentile(ms, 50), percentile(ms, 99), missing


def fan_out(port, writer, reader, set_id, count, tokens=None, pid=None, stream=None):
    """One write, `count` waiters of `reader` (or one each of `tokens`, on the
    set's stream when `stream`): ms from the write's answer to the last answer."""
    if tokens is None:
        conns = open_waiters(port, reader, count)
    else:
        conns = []
        for token in tokens[:count]:
            c = Conn(port)
            c.send(long_poll(now_cursor(port, token, stream), token, 120, stream))
            conns.append(c)
        # A first check each (no two are the same): wait until they are parked.
        settle(pid)
    time.sleep(2)
    sel = selectors.DefaultSelector()
    for c in conns:
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, c)
    w = Conn(port)
    status, _, body = w.call(request("/v1/terms", writer, "POST", {"set_id": set_id, "word": "fan-out", "rank": "last"}))
    written = time.monotonic()
    assert status == 201, status
    pending = count
    last = written
    deadline = written + 120
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            c = key.data
            try:
                chunk = c.sock.recv(65536)
            except BlockingIOError:
                continue
            c.buffer += chunk
            if not chunk or (b"\r\n\r\n" in c.buffer and b'"fan-out"' in c.buffer):
                sel.unregister(c.sock)
                pending -= 1
                last = time.monotonic()
    close_all(conns)
    return (last - written) * 1000, pending


def idle_cpu(port, pid, token, counts, seconds):
    """The server's CPU (utime + stime) over `seconds` with N long polls waiting and nothing written."""
    for n in counts:
        # Held longer than the run, so that no deadline falls in the window.
        conns = open_waiters(port, token, n, wait=600) if n else []
        settle(pid)
        cpu0, t0 = cpu_seconds(pid), time.monotonic()
        time.sleep(seconds)
        used = cpu_seconds(pid) - cpu0
        elapsed = time.monotonic() - t0
        print(f"idle {n} waiting: server CPU {used:.2f} s in {elapsed:.0f} s = {used / elapsed * 100:.3f} % of a core; "
              f"load average {os.getloadavg()[0]:.2f}", flush=True)
        record("idle", waiters=n, seconds=round(elapsed, 1), cpu_seconds=round(used, 3),
               cpu_percent=round(used / elapsed * 100, 4))
        close_all(conns)
        time.sleep(2)


def main():
    if sys.argv[1] == "fanout":
        port, pid = int(sys.argv[2]), int(sys.argv[3])
        writer, reader, set_id = sys.argv[4:7]
        counts = [int(n) for n in sys.argv[7:]]
        for n in counts:
            settle(pid)
            took, left = fan_out(port, writer, reader, set_id, n)
            print(f"{n} long polls of one token on one shared set, one write: all answered {took:.1f} ms after the write's answer ({left} never)", flush=True)
            record("fan-out", waiters=n, all_answered_ms=round(took, 1), never=left)
            time.sleep(2)
            settle(pid)
            took, left = fan_out(port, writer, reader, set_id, n, tokens=[f"fanout-bench-token-{i}" for i in range(1, n + 1)], pid=pid)
            print(f"{n} collaborators (a token each) on one shared set, one write: all answered {took:.1f} ms after the write's answer ({left} never)", flush=True)
            record("fan-out-users", waiters=n, all_answered_ms=round(took, 1), never=left)
            time.sleep(2)
            settle(pid)
            took, left = fan_out(port, writer, reader, set_id, n, tokens=[f"fanout-bench-token-{i}" for i in range(1, n + 1)], pid=pid,
                                 stream=f"set:{set_id}")
            print(f"{n} collaborators (a token each) on the set's stream, one write: all answered {took:.1f} ms after the write's answer ({left} never)", flush=True)
            record("fan-out-stream", waiters=n, all_answered_ms=round(took, 1), never=left)
            time.sleep(2)
        return
    if sys.argv[1] == "teacher":
        import teacher as classroom
        port, pid = int(sys.argv[2]), int(sys.argv[3])
        writer, set_id = sys.argv[4:6]
        clients = int(os.environ.get("BENCH_TEACHER_CLIENTS", "4"))
        transports = os.environ.get("BENCH_TEACHER_TRANSPORTS", "events polls").split()
        for n in [int(n) for n in sys.argv[6:]]:
            for events, how in ((True, "an event stream"), (False, "long polls")):
                if ("events" if events else "polls") not in transports:
                    continue
                settle(pid)
                writes, rate = int(os.environ.get("BENCH_TEACHER_WRITES", "200")), float(os.environ.get("BENCH_TEACHER_RATE", "16"))
                r = classroom.run(port, pid, writer, set_id, n, events, writes=writes, rate=rate, clients=clients)
                client = f"{r['clients']} client processes" if r["clients"] else "one client process, the writer a thread of it"
                print(f"{n} students on the teacher's set's stream ({how} each), {writes} writes at {rate:g}/s, {client}: "
                      f"commit to device (arrived) p50 {r['p50']:.1f} ms, p99 {r['p99']:.1f} ms, max {r['max']:.1f} ms "
                      f"({r['missing']} never); read by the client p50 {r['read_p50']:.1f}, p99 {r['read_p99']:.1f}, "
                      f"max {r['read_max']:.1f} ms (in the client's queue p50 {r['queued_p50']:.1f}, p99 {r['queued_p99']:.1f} ms); "
                      f"CPU per answer delivered: server {r['server_us_each']:.1f} us, clients {r['client_us_each']:.1f} us "
                      f"({r['delivered']} answers, server {r['server_cpu_s']:.2f} s, clients {r['client_cpu_s']:.2f} s "
                      f"in {r['seconds']:.1f} s); load {os.getloadavg()[0]:.2f}", flush=True)
                record("teacher-events-arrived" if events else "teacher-arrived", students=n, clients=r["clients"], writes=writes, rate=rate,
                       p50_ms=round(r["p50"], 2), p99_ms=round(r["p99"], 2), max_ms=round(r["max"], 2),
                       read_p50_ms=round(r["read_p50"], 2), read_p99_ms=round(r["read_p99"], 2), missing=r["missing"],
                       server_us_each=round(r["server_us_each"], 2), client_us_each=round(r["client_us_each"], 2))
                time.sleep(2)
        return
    if sys.argv[1] == "idle":
        port, pid, token, seconds = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], float(sys.argv[5])
        idle_cpu(port, pid, token, [int(n) for n in sys.argv[6:]], seconds)
        return
    port, pid = int(sys.argv[1]), int(sys.argv[2])
    writer, reader, bystander, set_id = sys.argv[3:7]
    counts = [int(n) for n in sys.argv[7:]]
    p50, p99, missing = latency(port, writer, reader, set_id, writes=60, rate=4, poll_every=1.0)
    print(f"polling every 1 s: commit to device p50 {p50:.1f} ms, p99 {p99:.1f} ms (60 writes at 4/s; {missing} missing)", flush=True)
    record("polling", p50_ms=round(p50, 2), p99_ms=round(p99, 2), missing=missing)
    for n in counts:
        time.sleep(1)
        before = rss_kib(pid)
        others = open_waiters(port, bystander, n - 1, wait=600) if n > 1 else []
        settle(pid)
        after = rss_kib(pid)
        cpu0 = cpu_seconds(pid)
        time.sleep(20)
        idle = (cpu_seconds(pid) - cpu0) / 20 * 100
        counted = live_counters(port)
        p50, p99, missing = latency(port, writer, reader, set_id)
        during = counter_deltas(counted, live_counters(port))
        per = (after - before) / max(1, n - 1)
        print(f"{n} waiting: commit to device p50 {p50:.1f} ms, p99 {p99:.1f} ms (200 writes at 16/s; {missing} missing; "
              f"the server meanwhile: {during}); "
              f"server RSS +{after - before} KiB for {n - 1} other waiters ({per:.2f} KiB each); "
              f"idle CPU {idle:.2f} % of a core", flush=True)
        record("waiting", waiters=n, p50_ms=round(p50, 2), p99_ms=round(p99, 2), missing=missing,
               rss_kib=after - before, rss_kib_each=round(per, 3), idle_cpu_percent=round(idle, 4))
        close_all(others)
        time.sleep(2)
        took, left = fan_out(port, writer, reader, set_id, n)
        print(f"{n} waiting on one shared set, one write: all answered {took:.1f} ms after the write's answer ({left} never)", flush=True)
        record("fan-out", waiters=n, all_answered_ms=round(took, 1), never=left)


if __name__ == "__main__":
    main()

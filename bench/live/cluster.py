"""Fan-out past what one process may hold (issue 46): one write to a set that
N devices wait on, N up to 100,000, spread over several `ferry serve`
instances of one database, as behind a load balancer.

    cluster.py PORTS SERVER_PIDS WRITER_TOKEN SET_ID N
        PORTS, SERVER_PIDS: comma-separated, one of each per instance

Why several instances and several client processes: this machine lets a
process hold at most 20,000 descriptors (`ulimit -Hn`; root may not raise it
here), so neither one server nor one client can hold 100,000 connections.
Users fan-1..fan-N (made by run.sh, tokens "fanout-bench-token-<i>") each
long-poll the set's stream (`stream=set:<id>`) from the stream's cursor now,
each instance taking N / instances of them; a client process holds at most
15,000. The write goes to the first instance; the others hear of it through
PostgreSQL (the first instance's batched NOTIFY), as they would in
production. The figure: from the write's answer to the last device's answer
holding the term, on the system-wide monotonic clock that every process
shares. Each figure is appended to $BENCH_LIVE_RESULTS when set.

What it prints besides, to tell where the time goes:
- per instance: when its devices' answers arrived (the kernel's receive
  time, SO_TIMESTAMPNS, as teacher.py stamps them: first, half, last) and
  when its client process read the last of them, with that client's CPU;
  any answer that was not the term (its status);
- per instance: its CPU, and the difference of its `ferry_live_*` and
  `ferry_db_pool_*` counters over the answers (wakes, checks, answers
  taken from another's check, bulk token lookups and the tokens they named,
  retries, pool waits), from /metrics read before the write and after the
  last answer; PostgreSQL's backends' CPU over the same span;
- BENCH_CLUSTER_TIMELINE=1: every 2 s, each instance's CPU and counters.
"""
import json, os, selectors, subprocess, sys, threading, time, urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live import Conn, cpu_seconds, long_poll, now_cursor, percentile, record, request  # noqa: E402
from teacher import realtime_offset, receive, stamped  # noqa: E402

PER_PROCESS = 15_000


def child(port, cursor, stream, first, last):
    """Holds the long polls of users first..last on one instance; says "sent",
    then, given the write's time, one JSON line: each answer's arrival (the
    kernel's stamp) and read times, the statuses of answers without the term,
    how many never came, and its CPU from "go"."""
    offset = realtime_offset()
    sel = selectors.DefaultSelector()
    for i in range(first, last + 1):
        c = Conn(port)
        stamped(c.sock)
        c.send(long_poll(cursor, f"fanout-bench-token-{i}", 600, stream))
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, c)
    print("sent", flush=True)
    written = float(sys.stdin.readline().split()[1])
    cpu0 = time.process_time()
    pending, arrived, read, others = last - first + 1, [], [], {}
    deadline = time.monotonic() + 300
    while pending and time.monotonic() < deadline:
        for key, _ in sel.select(timeout=1):
            c = key.data
            try:
                chunk, kernel = receive(c.sock, offset)
            except BlockingIOError:
                continue
            at = time.monotonic()
            c.buffer += chunk
            if not chunk:
                others["closed"] = others.get("closed", 0) + 1
            elif b"\r\n\r\n" not in c.buffer:
                continue
            elif b'"fan-out"' not in c.buffer:
                # Not the term: a whole answer of another kind (an error, an empty page) ends its wait too.
                head, _, body = c.buffer.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0]) if b"ontent-" in head else 0
                if len(body) < length:
                    continue
                # A registration refused (a 503: the pool busy) arrived before the write; the fan-out's own after it.
                status = head.split(b" ", 2)[1].decode() + (" before the write" if kernel is not None and kernel < written else "")
                others[status] = others.get(status, 0) + 1
            else:
                arrived.append(kernel if kernel is not None and kernel <= at else at)
                read.append(at)
            sel.unregister(c.sock)
            c.sock.close()
            pending -= 1
    print(json.dumps({"arrived": arrived, "read": read, "others": others, "never": pending,
                      "cpu": time.process_time() - cpu0}), flush=True)


def counters(port):
    """The instance's ferry_live_* and ferry_db_pool_* counters (nil when /metrics did not answer in 10 s)."""
    found = {}
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
            for line in answer.read().decode().splitlines():
                name, _, value = line.partition(" ")
                if name.startswith(("ferry_live_", "ferry_db_pool_")) and name.endswith("_total"):
                    found[name[len("ferry_"):-len("_total")]] = float(value)
    except OSError as error:
        print(f"  /metrics of :{port} did not answer: {error}", file=sys.stderr, flush=True)
        return None
    return found


def deltas(before, after):
    if before is None or after is None:
        return "counters: /metrics did not answer"
    keys = ["live_wakes", "live_checks", "live_shared_answers", "live_token_lookups", "live_tokens_looked_up", "live_retries",
            "live_hints", "db_pool_waits", "db_pool_acquire_timeouts"]
    return ", ".join(f"{int(after[k] - before.get(k, 0))} {k[5:] if k.startswith('live_') else k}" for k in keys if k in after)


def postgres_backends():
    """The pids of the run database's backends (the instances' pools, listeners and senders)."""
    url = os.environ.get("FERRY_DATABASE_MIGRATION_URL")
    if not url:
        return []
    out = subprocess.run(["psql", "-X", "-At", url, "-c", "SELECT pid FROM pg_stat_activity WHERE datname = current_database()"],
                         capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def token_reads():
    """PostgreSQL's reads of ferry.tokens so far (scans and rows, by sequence and by index): every token lookup,
    a bulk one's or a request's own, reads it. Counted by each backend and flushed within its idle interval (10 s)."""
    url = os.environ.get("FERRY_DATABASE_MIGRATION_URL")
    if not url:
        return None
    out = subprocess.run(["psql", "-X", "-At", "-F", " ", url, "-c",
                          "SELECT seq_scan, seq_tup_read, coalesce(idx_scan, 0), coalesce(idx_tup_fetch, 0) FROM pg_stat_all_tables"
                          " WHERE schemaname = 'ferry' AND relname = 'tokens'"], capture_output=True, text=True)
    return [int(v) for v in out.stdout.split()] or None


def cpu_of(pids):
    total = 0.0
    for p in pids:
        try:
            total += cpu_seconds(p)
        except OSError:
            pass
    return total


def settle(pids, below=5.0, most=1800):
    """Until every instance, and every PostgreSQL backend of the run's
    database, uses under `below` % of a core over 2 s: each instance has
    parked its waiters, after a first check each. The backends count too: an
    instance whose workers all wait for a token lookup uses no CPU of its own
    while it still parks (bench/live/README.md, stop 17)."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        watched = pids + postgres_backends()
        before = [cpu_of([p]) for p in watched]
        time.sleep(2)
        if all((cpu_of([p]) - b) / 2 * 100 < below for p, b in zip(watched, before)):
            return
    raise SystemExit("the instances did not settle")


def main():
    if sys.argv[1] == "child":
        port, cursor, stream, first, last = int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6])
        child(port, cursor, stream, first, last)
        return
    ports = [int(p) for p in sys.argv[1].split(",")]
    pids = [int(p) for p in sys.argv[2].split(",")]
    writer, set_id, count = sys.argv[3], sys.argv[4], int(sys.argv[5])
    stream = f"set:{set_id}"
    # The set is quiet: the stream's cursor now is every device's cursor now.
    cursor = now_cursor(ports[0], "fanout-bench-token-1", stream)
    share = -(-count // len(ports))
    children, child_ports, first = [], [], 1
    for index, port in enumerate(ports):
        end = min(count, index * share + share)
        while first <= end:
            last = min(end, first + PER_PROCESS - 1)
            children.append(subprocess.Popen([sys.executable, __file__, "child", str(port), cursor, stream, str(first), str(last)],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            child_ports.append(port)
            first = last + 1
    for c in children:
        if c.stdout.readline().strip() != "sent":
            raise SystemExit("a client process failed to send its long polls")
    settle(pids)
    # 12 s, not 2: the backends' counts of the parking's token reads reach the statistics before the write (token_reads).
    time.sleep(12)
    backends = postgres_backends()
    reads_before = token_reads()
    before = [counters(p) for p in ports]
    cpu_before, pg_before = [cpu_seconds(p) for p in pids], cpu_of(backends)
    timeline, stop = [], threading.Event()

    def sample():
        # Each instance's CPU share over the interval (a busy instance's /metrics may take seconds), then its counters.
        t0 = last_at = time.monotonic()
        last = [cpu_seconds(p) for p in pids]
        while not stop.wait(2):
            now, at = [cpu_seconds(p) for p in pids], time.monotonic()
            timeline.append((at - t0, [(n - b) / (at - last_at) for n, b in zip(now, last)], [counters(p) for p in ports]))
            last, last_at = now, at

    sampler = threading.Thread(target=sample, daemon=True)
    if os.environ.get("BENCH_CLUSTER_TIMELINE") == "1":
        sampler.start()
    offset = realtime_offset()
    w = Conn(ports[0])
    stamped(w.sock)
    w.send(request("/v1/terms", writer, "POST", {"set_id": set_id, "word": "fan-out", "rank": "last"}))
    kernel = None
    while b"\r\n\r\n" not in w.buffer:
        chunk, kernel = receive(w.sock, offset)
        w.buffer += chunk
    written = time.monotonic()
    if kernel is not None and kernel <= written:
        written = kernel
    if not w.buffer.startswith(b"HTTP/1.1 201"):
        raise SystemExit(f"the write answered: {w.buffer[:200]!r}")
    for c in children:
        c.stdin.write(f"go {written}\n")
        c.stdin.flush()
    results = []
    for c in children:
        results.append(json.loads(c.stdout.readline()))
        c.wait()
    stop.set()
    after = [counters(p) for p in ports]
    cpu_after, pg_after = [cpu_seconds(p) for p in pids], cpu_of(backends)
    arrived = [a for r in results for a in r["arrived"]]
    latest = max([a for r in results for a in r["read"]] + [written])
    never = sum(r["never"] for r in results)
    others = {}
    for r in results:
        for k, v in r["others"].items():
            others[k] = others.get(k, 0) + v
    took = (latest - written) * 1000
    arrived_last = (max(arrived + [written]) - written) * 1000
    print(f"{count} collaborators (a token each) on the set's stream across {len(ports)} instances, one write: "
          f"all answered {took:.1f} ms after the write's answer ({never} never"
          + (f"; answers without the term: {others}" if others else "") + f"); the last arrived at {arrived_last:.1f} ms; "
          f"load {os.getloadavg()[0]:.1f}", flush=True)
    for i, port in enumerate(ports):
        mine = [r for r, p in zip(results, child_ports) if p == port]
        r = {"arrived": [a for m in mine for a in m["arrived"]], "read": [a for m in mine for a in m["read"]],
             "cpu": sum(m["cpu"] for m in mine)}
        ms = sorted((a - written) * 1000 for a in r["arrived"])
        read_last = (max(r["read"]) - written) * 1000 if r["read"] else float("nan")
        print(f"  instance {i + 1} (:{port}): {len(ms)} answers arrived "
              f"first {ms[0] if ms else float('nan'):.0f} / half {percentile(ms, 50):.0f} / last {ms[-1] if ms else float('nan'):.0f} ms, "
              f"read by {read_last:.0f} ms (client CPU {r['cpu']:.2f} s); server CPU {cpu_after[i] - cpu_before[i]:.2f} s; "
              f"{deltas(before[i], after[i])}", flush=True)
    print(f"  PostgreSQL's {len(backends)} backends of the run's database: {pg_after - pg_before:.2f} s CPU", flush=True)
    # The backends' counts reach the statistics once idle for 10 s.
    time.sleep(12)
    reads_after = token_reads()
    if reads_before and reads_after:
        d = [a - b for a, b in zip(reads_after, reads_before)]
        print(f"  ferry.tokens read during the answers (and 12 s after): {d[0]} sequential scans ({d[1]} rows), "
              f"{d[2]} index scans ({d[3]} rows)", flush=True)
    for at, cpus, seen in timeline:
        looked = [int(s["live_tokens_looked_up"] - b.get("live_tokens_looked_up", 0)) if s and b and "live_tokens_looked_up" in s else -1
                  for s, b in zip(seen, before)]
        checks = [int(s["live_checks"] - b["live_checks"]) if s and b else -1 for s, b in zip(seen, before)]
        print(f"  +{at:5.1f} s: CPU {' '.join(f'{c * 100:3.0f}%' for c in cpus)}; checks {checks}; tokens looked up {looked}", flush=True)
    record("fan-out-cluster", waiters=count, instances=len(ports), all_answered_ms=round(took, 1), arrived_ms=round(arrived_last, 1),
           never=never, others=others)


if __name__ == "__main__":
    main()

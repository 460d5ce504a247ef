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
"""
import json, os, selectors, subprocess, sys, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live import Conn, cpu_seconds, long_poll, now_cursor, record, request  # noqa: E402

PER_PROCESS = 15_000


def child(port, cursor, stream, first, last):
    """Holds the long polls of users first..last on one instance; says "sent",
    then, given the write's time, "done <last answer> <never>"."""
    sel = selectors.DefaultSelector()
    for i in range(first, last + 1):
        c = Conn(port)
        c.send(long_poll(cursor, f"fanout-bench-token-{i}", 600, stream))
        c.sock.setblocking(False)
        sel.register(c.sock, selectors.EVENT_READ, c)
    print("sent", flush=True)
    written = float(sys.stdin.readline().split()[1])
    pending, latest = last - first + 1, written
    deadline = time.monotonic() + 300
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
                c.sock.close()
                pending -= 1
                latest = time.monotonic()
    print(f"done {latest} {pending}", flush=True)


def settle(pids, below=5.0, most=900):
    """Until every instance uses under `below` % of a core over 2 s: each has
    parked its waiters, after a first check each."""
    deadline = time.monotonic() + most
    while time.monotonic() < deadline:
        before = [cpu_seconds(p) for p in pids]
        time.sleep(2)
        if all((cpu_seconds(p) - b) / 2 * 100 < below for p, b in zip(pids, before)):
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
    children, first = [], 1
    for index, port in enumerate(ports):
        end = min(count, index * share + share)
        while first <= end:
            last = min(end, first + PER_PROCESS - 1)
            children.append(subprocess.Popen([sys.executable, __file__, "child", str(port), cursor, stream, str(first), str(last)],
                                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
            first = last + 1
    for c in children:
        if c.stdout.readline().strip() != "sent":
            raise SystemExit("a client process failed to send its long polls")
    settle(pids)
    time.sleep(2)
    w = Conn(ports[0])
    status, _, body = w.call(request("/v1/terms", writer, "POST", {"set_id": set_id, "word": "fan-out", "rank": "last"}))
    written = time.monotonic()
    if status != 201:
        raise SystemExit(f"the write answered {status}: {body[:200]!r}")
    for c in children:
        c.stdin.write(f"go {written}\n")
        c.stdin.flush()
    latest, never = written, 0
    for c in children:
        _, at, pending = c.stdout.readline().split()
        latest, never = max(latest, float(at)), never + int(pending)
        c.wait()
    took = (latest - written) * 1000
    print(f"{count} collaborators (a token each) on the set's stream across {len(ports)} instances, one write: "
          f"all answered {took:.1f} ms after the write's answer ({never} never)", flush=True)
    record("fan-out-cluster", waiters=count, instances=len(ports), all_answered_ms=round(took, 1), never=never)


if __name__ == "__main__":
    main()

"""A teacher's set followed by a class (issue 46): `live.py teacher` runs this.

    teacher.py child PORT CURSOR STREAM EVENTS FIRST LAST WRITES

STUDENTS users (fan-1..N, made by run.sh, tokens "fanout-bench-token-<i>")
each follow the set's stream with their own token: an event stream each, or a
long poll each, re-sent after every answer as a device in continuous mode
does. The teacher adds WRITES terms (default 200) at RATE a second (default
16). Commit to device is taken over every (student, term) pair.

Why several processes (BENCH_TEACHER_CLIENTS, default 4): one Python thread
reading a thousand sockets is a queue of its own. At 16,000 answers a second
the last socket of a busy select waited behind the reads and parses of all
the others, and the writer, a thread of the same process, waited for the GIL
to stamp its answers. Now the writer is the parent process alone, and the
students are split over child processes, each stamping its own. With
BENCH_TEACHER_CLIENTS=0 the students are read in this process and the writer
is a thread of it, as before (the same reader, ``Students``, either way).

Two stamps for each answer, both on CLOCK_MONOTONIC, which every process shares:
- `arrived`: when the answer's last bytes reached the student's socket, from
  the kernel's receive timestamp (SO_TIMESTAMPNS, taken on CLOCK_REALTIME and
  moved to the monotonic clock by each process's offset between the two).
  A device has a core of its own: this is when its own client could have read
  it, whatever the other 999 students' reads cost on this machine's two cores.
  The teacher's write answer is stamped the same way.
- `read`: when the client process read it (the figure before 2026-11-30,
  stop 16), which adds the client's own queue.
The run also prints the CPU each side used during the writes, per answer
delivered (the server's utime + stime from /proc, the clients' own), which
load moves less than latency.
"""
import json, os, re, selectors, signal, socket, struct, subprocess, sys, threading, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live import Conn, cpu_seconds, long_poll, now_cursor, percentile, request, settle  # noqa: E402

SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)


def realtime_offset():
    """CLOCK_REALTIME minus CLOCK_MONOTONIC, read where the two reads are closest."""
    best = None
    for _ in range(20):
        m0 = time.monotonic()
        r = time.time()
        m1 = time.monotonic()
        if best is None or m1 - m0 < best[0]:
            best = (m1 - m0, r - (m0 + m1) / 2)
    return best[1]


def stamped(sock):
    """Has the kernel stamp what arrives on `sock` (``receive``)."""
    sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)


def receive(sock, offset):
    """One recv: (bytes, the kernel's time for the latest of them on the monotonic clock, or None)."""
    data, ancillary, _, _ = sock.recvmsg(65536, socket.CMSG_SPACE(16))
    kernel = None
    for level, kind, value in ancillary:
        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS and len(value) >= 16:
            seconds, nanoseconds = struct.unpack("qq", value[:16])
            kernel = seconds + nanoseconds / 1e9 - offset
    return data, kernel


class Students:
    """Students first..last, each on a connection of its own following the
    set's stream from `cursor` (an event stream, or a long poll re-sent after
    each answer), its arrivals stamped as the module says."""

    # An event's page is spelled as PostgreSQL builds it (`"word" : "tw1"`) or compact.
    word = re.compile(rb'"word" ?: ?"tw(\d+)"')
    next_cursor = re.compile(rb'"cursor":"([^"]+)"')

    def __init__(self, port, cursor, stream, events, first, last):
        self.stream, self.events, self.count = stream, events, last - first + 1
        self.offset = realtime_offset()
        self.sel = selectors.DefaultSelector()
        for i in range(first, last + 1):
            c = Conn(port)
            stamped(c.sock)
            c.token, c.cursor, c.seen = f"fanout-bench-token-{i}", cursor, set()
            if events:
                c.send(request(f"/v1/changes?since={cursor}&stream={stream}", c.token, headers=["Accept: text/event-stream"]))
            else:
                c.send(long_poll(cursor, c.token, 60, stream))
            c.sock.setblocking(False)
            self.sel.register(c.sock, selectors.EVENT_READ, c)

    def watch(self, source, handler):
        """Calls `handler()` whenever `source` (a file, such as stdin) is readable during ``read``."""
        self.sel.register(source, selectors.EVENT_READ, handler)

    def read(self, expected, deadline):
        """Reads until `expected` arrivals, or until `deadline()` (None while there is
        none) has passed: each arrival as (term, arrived, read)."""
        arrived = []
        while len(arrived) < expected and (deadline() is None or time.monotonic() < deadline()):
            for key, _ in self.sel.select(timeout=0.2):
                c = key.data
                if callable(c):
                    c()
                    continue
                try:
                    chunk, kernel = receive(c.sock, self.offset)
                except BlockingIOError:
                    continue
                at = time.monotonic()
                if not chunk:
                    raise SystemExit("a student's connection closed")
                c.buffer += chunk
                if kernel is None or kernel > at:
                    kernel = at
                if self.events:
                    # Whole events only (each ends with a blank line); the rest waits for its end.
                    end = c.buffer.rfind(b"\n\n")
                    if end >= 0:
                        for n in map(int, self.word.findall(c.buffer, 0, end)):
                            if n not in c.seen:
                                c.seen.add(n)
                                arrived.append((n, kernel, at))
                        c.buffer = c.buffer[end + 2:]
                    continue
                head, sep, rest = c.buffer.partition(b"\r\n\r\n")
                if not sep:
                    continue
                length = int(re.search(rb"(?i)content-length: *(\d+)", head).group(1)) if b"ontent-" in head else 0
                if len(rest) < length:
                    continue
                body, c.buffer = rest[:length], rest[length:]
                status = int(head.split(b" ", 2)[1])
                if status == 200:
                    for n in map(int, self.word.findall(body)):
                        if n not in c.seen:
                            c.seen.add(n)
                            arrived.append((n, kernel, at))
                    c.cursor = self.next_cursor.search(body).group(1).decode()
                elif status != 304:
                    raise SystemExit(f"a student's long poll answered {status}: {body[:200]!r}")
                c.send(long_poll(c.cursor, c.token, 60, self.stream))
        return arrived

    def close(self):
        for key in list(self.sel.get_map().values()):
            if not callable(key.data):
                key.fileobj.close()


def child(port, cursor, stream, events, first, last, writes):
    """Holds students first..last; says "sent"; reads until all `writes` terms
    reached each, or stdin says "stop DEADLINE" and DEADLINE passes; then one
    JSON line: each arrival as [term, arrived, read], and its CPU from "go"."""
    students = Students(port, cursor, stream, events, first, last)
    pending = b""
    cpu_at_go, deadline = None, None

    def commands():
        """The parent's whole lines read so far, split ("go", "stop DEADLINE"); EOF is a stop now."""
        nonlocal pending
        got = os.read(0, 4096)
        if not got:
            return [["stop", str(time.monotonic())]]
        pending += got
        *lines, pending = pending.split(b"\n")
        return [line.decode().split() for line in lines if line.strip()]

    def control():
        nonlocal cpu_at_go, deadline
        for line in commands():
            if line[0] == "go":
                cpu_at_go = time.process_time()
            elif line[0] == "stop":
                deadline = float(line[1])

    students.watch(sys.stdin, control)
    print("sent", flush=True)
    arrived = students.read(writes * students.count, lambda: deadline)
    cpu = time.process_time() - cpu_at_go if cpu_at_go is not None else 0.0
    # All arrived before the parent's "stop": it is still to come, and answered.
    while deadline is None:
        control()
    print(json.dumps({"arrived": arrived, "cpu": cpu}), flush=True)
    students.close()


def write_terms(conn, writer, set_id, writes, rate, offset):
    """The teacher's `writes` terms at `rate` a second on `conn` (stamped): for
    each term number, when its answer arrived (the last recv's kernel time) and
    when it was read."""
    answered, answered_read = {}, {}
    start = time.monotonic()
    for i in range(writes):
        pause = start + i / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        conn.send(request("/v1/terms", writer, "POST", {"set_id": set_id, "word": f"tw{i}", "rank": "last"}))
        # The answer's head and body, the last recv's kernel time its stamp.
        kernel = None
        while True:
            head, sep, rest = conn.buffer.partition(b"\r\n\r\n")
            if sep:
                length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0]) if b"ontent-" in head else 0
                if len(rest) >= length:
                    break
            chunk, kernel = receive(conn.sock, offset)
            if not chunk:
                raise SystemExit("the teacher's connection closed")
            conn.buffer += chunk
        at = time.monotonic()
        status = int(head.split(b" ", 2)[1])
        conn.buffer = rest[length:]
        if status != 201:
            raise SystemExit(f"write answered {status}: {rest[:200]!r}")
        answered[i] = kernel if kernel is not None and kernel <= at else at
        answered_read[i] = at
    return answered, answered_read


def run(port, pid, writer, set_id, count, events, writes=200, rate=16, clients=4):
    """The run of one transport; a dict of its figures. `clients` 0: the
    students in this process, the writer a thread of it (the client of stop
    15 and before, whose queue and GIL the figures then include)."""
    stream = f"set:{set_id}"
    # The set is quiet: the stream's cursor now is every student's cursor now.
    cursor = now_cursor(port, "fanout-bench-token-1", stream)
    children, here = [], None
    if clients == 0:
        here = Students(port, cursor, stream, events, 1, count)
    else:
        clients = min(clients, count)
        share = -(-count // clients)
        for first in range(1, count + 1, share):
            last = min(count, first + share - 1)
            children.append(subprocess.Popen(
                [sys.executable, __file__, "child", str(port), cursor, stream, "1" if events else "0", str(first), str(last), str(writes)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True))
        for c in children:
            if c.stdout.readline().strip() != "sent":
                raise SystemExit("a client process failed to open its students")
    settle(pid)
    offset = realtime_offset()
    conn = Conn(port)
    stamped(conn.sock)
    for c in children:
        c.stdin.write("go\n")
        c.stdin.flush()
    # A profiler of the server over the writes alone, e.g. "perf record -g -p {pid} -o FILE" (stopped by SIGINT).
    profiler = os.environ.get("BENCH_TEACHER_PROFILE")
    if profiler:
        profiler = subprocess.Popen(profiler.replace("{pid}", str(pid)), shell=True, start_new_session=True)
        time.sleep(1)
    cpu0, clock0 = cpu_seconds(pid), time.monotonic()
    if here is None:
        answered, answered_read = write_terms(conn, writer, set_id, writes, rate, offset)
        deadline = time.monotonic() + 10
        for c in children:
            c.stdin.write(f"stop {deadline}\n")
            c.stdin.flush()
        arrived, client_cpu = [], 0.0
        for c in children:
            result = json.loads(c.stdout.readline())
            arrived += result["arrived"]
            client_cpu += result["cpu"]
            c.stdin.close()
            c.wait()
    else:
        wrote = {}

        def write():
            try:
                wrote["terms"] = write_terms(conn, writer, set_id, writes, rate, offset)
            except BaseException as error:  # raised again once the reader stops
                wrote["failed"] = error
            wrote["deadline"] = time.monotonic() + (0 if "failed" in wrote else 10)

        cpu_at_go = time.process_time()
        thread = threading.Thread(target=write, daemon=True)
        thread.start()
        arrived = here.read(writes * count, lambda: wrote.get("deadline"))
        thread.join()
        client_cpu = time.process_time() - cpu_at_go
        here.close()
        if "failed" in wrote:
            raise wrote["failed"]
        answered, answered_read = wrote["terms"]
    server_cpu, seconds = cpu_seconds(pid) - cpu0, time.monotonic() - clock0
    if profiler:
        os.killpg(profiler.pid, signal.SIGINT)
        profiler.wait()
    conn.sock.close()
    if not arrived:
        raise SystemExit("no student had a term")
    kernel_ms = [(k - answered[n]) * 1000 for n, k, _ in arrived if n in answered]
    read_ms = [(r - answered_read[n]) * 1000 for n, _, r in arrived if n in answered]
    queued_ms = [(r - k) * 1000 for n, k, r in arrived if n in answered]
    delivered = len(kernel_ms)
    return {
        "p50": percentile(kernel_ms, 50), "p99": percentile(kernel_ms, 99), "max": max(kernel_ms),
        "read_p50": percentile(read_ms, 50), "read_p99": percentile(read_ms, 99), "read_max": max(read_ms),
        "queued_p50": percentile(queued_ms, 50), "queued_p99": percentile(queued_ms, 99),
        "missing": writes * count - delivered, "delivered": delivered, "seconds": seconds,
        "server_cpu_s": server_cpu, "client_cpu_s": client_cpu,
        "server_us_each": server_cpu / max(1, delivered) * 1e6, "client_us_each": client_cpu / max(1, delivered) * 1e6,
        "clients": len(children),
    }


if __name__ == "__main__":
    if sys.argv[1] == "child":
        port, cursor, stream, events, first, last, writes = sys.argv[2:9]
        child(int(port), cursor, stream, events == "1", int(first), int(last), int(writes))

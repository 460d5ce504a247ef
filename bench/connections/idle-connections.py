"""Opens N keep-alive connections to a server, each after one answered GET,
and reports the server's RSS growth per connection (bench/connections/idle-connections.sh)."""
import socket, sys, time

def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise SystemExit("no VmRSS")

def main():
    port, pid, count = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    request = b"GET /healthz HTTP/1.1\r\nHost: bench\r\n\r\n"
    # Warm the server: its threads, buffers and allocator arenas exist before the baseline.
    for _ in range(200):
        with socket.create_connection(("127.0.0.1", port)) as s:
            s.sendall(request)
            s.recv(4096)
    time.sleep(1)
    before = rss_kib(pid)
    sockets = []
    started = time.time()
    for i in range(count):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(request)
        answer = s.recv(4096)
        if not answer.startswith(b"HTTP/1.1 200"):
            raise SystemExit(f"connection {i}: {answer[:60]!r}")
        sockets.append(s)
    opened = time.time() - started
    time.sleep(2)
    after = rss_kib(pid)
    # Every connection must still be open and served: one more request on a sample.
    for s in sockets[:: max(1, count // 100)]:
        s.sendall(request)
        if not s.recv(4096).startswith(b"HTTP/1.1 200"):
            raise SystemExit("an idle connection was not served")
    per = (after - before) / count
    print(f"idle connections: {count}, opened in {opened:.1f} s; server RSS {before} KiB before, {after} KiB after; "
          f"{per:.2f} KiB per connection (target <= 16)")
    for s in sockets:
        s.close()
    return 0 if per <= 16 else 1

if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A thousand slow clients: each opens a connection and trickles a request's
header section one byte a second, never finishing it. Runs for `seconds`, then
prints how many the server cut off, and after how long (median, max).

    slowloris.py PORT [COUNT=1000] [SECONDS=20]
"""
import selectors
import socket
import statistics
import sys
import time

port = int(sys.argv[1])
count = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
seconds = float(sys.argv[3]) if len(sys.argv) > 3 else 20
header = b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 10_000
selector = selectors.DefaultSelector()
opened = {}
for _ in range(count):
    s = socket.create_connection(("127.0.0.1", port))
    s.setblocking(False)
    opened[s] = [time.monotonic(), 0, None]  # opened at, bytes sent, closed at
    selector.register(s, selectors.EVENT_READ)
deadline = time.monotonic() + seconds
next_tick = time.monotonic()
while time.monotonic() < deadline:
    now = time.monotonic()
    if now >= next_tick:
        for s, state in opened.items():
            if state[2] is None:
                try:
                    s.send(header[state[1]:state[1] + 1])
                    state[1] += 1
                except OSError:
                    state[2] = now
        next_tick += 1
    for key, _ in selector.select(timeout=max(0, min(next_tick, deadline) - time.monotonic())):
        s = key.fileobj
        state = opened[s]
        try:
            data = s.recv(4096)
        except OSError:
            data = b""
        if not data or state[2] is None:
            # Closed, or answered (a 408) and then closed: either way cut off.
            if state[2] is None:
                state[2] = time.monotonic()
            selector.unregister(s)
cut = [state[2] - state[0] for state in opened.values() if state[2] is not None]
print(f"slow clients: {count} opened, {len(cut)} cut off by the server"
      + (f" after {statistics.median(cut):.1f} s median, {max(cut):.1f} s max" if cut else ""))
for s in opened:
    s.close()

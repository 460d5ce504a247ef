#!/usr/bin/env python3
"""bench/api/ratios.sh latency: latency.txt (server, connections, req/s, p50, p99 as
wrk prints them) -> latency.png, p50 and p99 of GET by id against connections,
one line a server and percentile, both axes logarithmic."""
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0}


def milliseconds(text):
    """wrk's "812.00us", "1.25ms", "2.10s" or "1.02m" in milliseconds."""
    for unit in ("us", "ms", "s", "m"):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            return float(text[: -len(unit)]) * UNITS[unit]
    raise ValueError(f"not a wrk latency: {text!r}")


rows = {}
for line in open(sys.argv[1]):
    if line.startswith("#") or not line.strip():
        continue
    server, connections, rate, p50, p99 = line.split()
    rows.setdefault(server, []).append((int(connections), float(rate), milliseconds(p50), milliseconds(p99)))

fig, axis = plt.subplots(figsize=(8, 5))
names = {"ferry": "Ferry", "kinto": "Kinto"}
for server, points in rows.items():
    points.sort()
    connections = [p[0] for p in points]
    line, = axis.plot(connections, [p[2] for p in points], marker="o", label=f"{names.get(server, server)} p50")
    axis.plot(connections, [p[3] for p in points], marker="o", linestyle="--", color=line.get_color(),
              label=f"{names.get(server, server)} p99")
axis.set_xscale("log", base=2)
axis.set_yscale("log")
axis.set_xticks([1, 4, 16, 64, 256, 512], labels=["1", "4", "16", "64", "256", "512"])
axis.set_xlabel("open connections (wrk)")
axis.set_ylabel("latency of GET by id (ms)")
axis.set_title("Latency against concurrency (bench/api/ratios.sh latency)")
axis.grid(True, which="both", alpha=0.3)
axis.legend()
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=100)

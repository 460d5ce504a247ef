#!/usr/bin/env python3
"""bench/soak: samples.jsonl (one line a minute) -> soak.png: resident memory
and open descriptors of the test process (the devices) and of ferry serve,
and the uploads' p50 and p99 latency, against minutes."""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

samples = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
minutes = [s["minute"] for s in samples]
fig, (memory, fds, latency) = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
memory.plot(minutes, [s["client_rss_kib"] / 1024 for s in samples], label="devices (test process)")
memory.plot(minutes, [s["server_rss_kib"] / 1024 for s in samples], label="ferry serve")
counted = [s for s in samples[1:] if "requests" in s]
if len(counted) >= 2 and counted[-1]["requests"] > counted[0]["requests"]:
    # The devices' process grows with its requests (Foundation's URLSession
    # on Linux, bench/soak/urlsession-growth.swift): say how much per request.
    per = (counted[-1]["client_rss_kib"] - counted[0]["client_rss_kib"]) * 1024 / (counted[-1]["requests"] - counted[0]["requests"])
    memory.annotate(f"devices: {per:.0f} bytes per request over {counted[-1]['requests']:,} requests",
                    xy=(0.02, 0.9), xycoords="axes fraction")
memory.set_ylabel("RSS (MiB)")
memory.set_ylim(bottom=0)
memory.legend()
fds.plot(minutes, [s["client_fds"] for s in samples], label="devices (test process)")
fds.plot(minutes, [s["server_fds"] for s in samples], label="ferry serve")
fds.set_ylabel("open descriptors")
fds.set_ylim(bottom=0)
fds.legend()
timed = [s for s in samples if s["uploads"] > 0]
latency.plot([s["minute"] for s in timed], [s["upload_p50_ms"] for s in timed], label="upload p50")
latency.plot([s["minute"] for s in timed], [s["upload_p99_ms"] for s in timed], label="upload p99")
latency.set_ylabel("ms")
latency.set_ylim(bottom=0)
latency.set_xlabel("minutes")
latency.legend()
seeds = samples[-1]["seeds"] if samples else 0
fig.suptitle(f"bench/soak: {seeds} seeds under faults, one ferry serve")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=80)

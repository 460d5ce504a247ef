#!/usr/bin/env python3
"""bench/scale: results.jsonl -> scale.png (p50 and p99 per operation against table size)."""
import json, sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt

rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
ops = [k for k, v in rows[0].items() if isinstance(v, dict)]
fig, axes = plt.subplots(1, 2, figsize=(12, 5), sharey=True)
for ax, q in zip(axes, ("p50", "p99")):
    for op in ops:
        ax.plot([r["size"] for r in rows], [r[op][q] for r in rows], marker="o", label=op)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("terms in the database")
    ax.set_title(f"{q} latency (ms)")
    ax.grid(True, which="both", alpha=0.3)
axes[0].set_ylabel("ms")
axes[1].legend(fontsize=8, loc="upper left")
fig.suptitle("Ferry: request latency against table size (bench/scale/run.sh)")
fig.tight_layout()
fig.savefig(sys.argv[2], dpi=90)

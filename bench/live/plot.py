"""Draws bench/live's figures against the number of waiting long polls.

    python3 bench/live/plot.py [RESULTS]     (default: bench/live/results.jsonl)

Reads the JSON lines bench/live/run.sh appends (the latest figure of each kind,
label and count wins) and writes, beside this script:
- latency.png: commit to device p50 and p99 against waiters, with the
  device polling every second for comparison;
- memory.png: the server's RSS growth, in all and per waiter, against waiters;
- idle-cpu.png: the server's CPU with the waiters idle, one line per label
  (e.g. before and after a change, measured in the same session).
Needs matplotlib (`pip install matplotlib`): a bench step, never CI's.
"""
import json, os, sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt

HERE = os.path.dirname(os.path.abspath(__file__))


def latest(path):
    """The last record of each (kind, label, waiters)."""
    found = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                found[(r["kind"], r["label"], r.get("waiters"))] = r
    return list(found.values())


def series(records, kind, label=None):
    rows = [r for r in records if r["kind"] == kind and (label is None or r["label"] == label)]
    return sorted(rows, key=lambda r: r.get("waiters", 0))


def waiter_axis(ax):
    # symlog: linear up to 1, so that 0 waiters has a place; nothing below it.
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlim(left=0, right=20_000)
    ax.set_xlabel("long polls waiting")
    ax.grid(True, which="both", alpha=0.3)


def save(fig, name, caption):
    fig.text(0.01, 0.01, caption, fontsize=7, color="grey")
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    out = os.path.join(HERE, name)
    fig.savefig(out, dpi=110)
    plt.close(fig)
    print(out)


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "results.jsonl")
    records = latest(path)
    waiting = series(records, "waiting")
    if waiting:
        label = waiting[-1]["label"]
        waiting = series(records, "waiting", label)
        xs = [r["waiters"] for r in waiting]
        fig, ax = plt.subplots(figsize=(6.4, 4))
        ax.plot(xs, [r["p50_ms"] for r in waiting], "o-", label="long poll p50")
        ax.plot(xs, [r["p99_ms"] for r in waiting], "s-", label="long poll p99")
        polling = series(records, "polling", label)
        if polling:
            ax.axhline(polling[-1]["p50_ms"], color="grey", linestyle="--", label="polling every 1 s, p50")
        ax.set_yscale("log")
        ax.set_ylabel("commit to device (ms)")
        ax.set_title("Commit to device against waiters (200 writes at 16/s)")
        waiter_axis(ax)
        ax.legend(loc="center right")
        save(fig, "latency.png", f"bench/live/run.sh, {label}, {waiting[-1]['at']}")

        shown = [r for r in waiting if r["waiters"] > 1]
        fig, ax = plt.subplots(figsize=(6.4, 4))
        ax.plot([r["waiters"] for r in shown], [r["rss_kib"] / 1024 for r in shown], "o-", label="RSS growth (MiB)")
        ax.set_ylabel("server RSS growth (MiB)")
        ax2 = ax.twinx()
        ax2.plot([r["waiters"] for r in shown], [r["rss_kib_each"] for r in shown], "s--", color="tab:orange",
                 label="per waiter (KiB)")
        ax2.set_ylabel("KiB per waiter")
        ax2.set_ylim(bottom=0)
        ax.set_title("Server memory against waiters")
        waiter_axis(ax)
        fig.legend(loc="upper left", bbox_to_anchor=(0.12, 0.9))
        save(fig, "memory.png", f"bench/live/run.sh, {label}, {shown[-1]['at'] if shown else ''}")

    idle = series(records, "idle")
    if idle:
        fig, ax = plt.subplots(figsize=(6.4, 4))
        for label in dict.fromkeys(r["label"] for r in idle):
            rows = series(records, "idle", label)
            ax.plot([r["waiters"] for r in rows], [r["cpu_percent"] for r in rows], "o-", label=label)
        ax.set_ylabel("server CPU, % of a core")
        ax.set_ylim(bottom=0)
        ax.set_title(f"Idle server CPU against waiting long polls ({idle[0]['seconds']:.0f} s each)")
        waiter_axis(ax)
        ax.legend(fontsize=8)
        save(fig, "idle-cpu.png", f"bench/live/run.sh idle, {idle[-1]['at']}")


if __name__ == "__main__":
    main()

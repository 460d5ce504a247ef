#!/usr/bin/env python3
"""heaptrack_print -l output -> the bytes still allocated at exit, by whose code
allocated them: the innermost frame of each backtrace that belongs to a known
library decides (Foundation's URLSession and libcurl, FerryKit, GRDB/SQLite,
the tests' own code), generic runtime frames (libswiftCore, Foundation,
Dispatch, libc) are skipped over."""
import re
import sys

UNITS = {"B": 1, "K": 1024, "M": 1024**2, "G": 1024**3}
CATEGORIES = [
    ("URLSession/libcurl (Foundation on Linux)", ("libcurl", "FoundationNetworking", "libnghttp2", "libssl", "libcrypto.so")),
    ("FerryKit", ("8FerryKit", "FerryKit.")),
    ("GRDB/SQLite", ("4GRDB", "libsqlite3")),
    ("the tests' own code", ("14FerryKitTests", "FerryKitTests.", "16FerryTestSupport", "7Testing", "XCTest")),
]


def size(text):
    match = re.fullmatch(r"([0-9.]+)([BKMG])", text)
    return float(match.group(1)) * UNITS[match.group(2)]


def category(frames):
    for frame in frames:
        for name, marks in CATEGORIES:
            if any(mark in frame for mark in marks):
                return name
    return "other"


totals, counts, examples = {}, {}, {}
block = None
for line in open(sys.argv[1]):
    match = re.match(r"^\s*([0-9.]+[BKMG]) leaked over ([0-9]+) calls from:\s*$", line)
    if match:
        block = [size(match.group(1)), int(match.group(2)), []]
        blocks = totals.setdefault("_blocks", [])
        blocks.append(block)
        continue
    if re.match(r"^\s*[0-9.]+[BKMG] leaked over", line):
        block = None  # a merged location's header; its backtraces follow
        continue
    if block is not None and line.strip():
        block[2].append(line.strip())

for leaked, calls, frames in totals.pop("_blocks", []):
    name = category(frames)
    totals[name] = totals.get(name, 0) + leaked
    counts[name] = counts.get(name, 0) + calls
    if name not in examples or leaked > examples[name][0]:
        examples[name] = (leaked, next((f for f in frames if not f.startswith("in ") and not f.startswith("at ")), "?"))

everything = sum(totals.values()) or 1
print("| allocated by | bytes still allocated at exit | share | allocations | largest site |")
print("|---|---|---|---|---|")
for name, leaked in sorted(totals.items(), key=lambda item: -item[1]):
    print(f"| {name} | {leaked:,.0f} | {100 * leaked / everything:.1f} % | {counts[name]:,} | `{examples[name][1][:70]}` |")

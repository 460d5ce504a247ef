#!/usr/bin/env python3
"""bench/scale: reads auto_explain's JSON plans from a PostgreSQL log and
reports, per statement, a JIT section or an executed sequential scan of an
app.* table. Exit 1 when any is found.

  explain_check.py LOGFILE [FROM_LINE]
"""
import json, re, sys

# The tables the seed grows; the others hold a few hundred rows at most, which any
# planner rightly reads whole.
TABLES = {"terms", "study_sets"}


def plans(text):
    # auto_explain.log_format = json: "duration: X ms  plan:\n{ ... }" until the next log line.
    for m in re.finditer(r"duration: ([0-9.]+) ms  plan:\n(\{.*?\n\})", text, re.S):
        try:
            yield float(m.group(1)), json.loads(m.group(2))
        except json.JSONDecodeError:
            continue


def seq_scans(node, out):
    if node.get("Actual Loops", 0) > 0:
        if node.get("Node Type") == "Seq Scan" and node.get("Relation Name") in TABLES:
            out.append((node["Relation Name"], node.get("Actual Rows", 0) + node.get("Rows Removed by Filter", 0)))
        for child in node.get("Plans", []):
            seq_scans(child, out)
    return out


def main():
    lines = open(sys.argv[1], errors="replace").read().split("\n")
    start = int(sys.argv[2]) if len(sys.argv) > 2 else 0
    text = "\n".join(line[1:] if line.startswith("\t") else line for line in lines[start:])
    count = jit = 0
    bad = []
    for duration, plan in plans(text):
        count += 1
        if "JIT" in plan:
            jit += 1
            bad.append(("JIT", duration, plan.get("Query Text", "")[:120]))
        for table, rows in seq_scans(plan.get("Plan", {}), []):
            bad.append((f"Seq Scan on {table} ({rows} rows read)", duration, plan.get("Query Text", "")[:120]))
    print(f"auto_explain: {count} statements, {jit} with JIT, {len(bad) - jit} executed sequential scans of app tables")
    by_statement = {}
    for what, duration, query in bad:
        key = (what.split(" (")[0], " ".join(query.split())[:100])
        by_statement.setdefault(key, []).append(duration)
    for (what, query), durations in sorted(by_statement.items(), key=lambda kv: -len(kv[1])):
        print(f"  {len(durations)} x {what}, {min(durations):.1f}-{max(durations):.1f} ms: {query}")
    print("PASS" if not bad else "FAIL")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()

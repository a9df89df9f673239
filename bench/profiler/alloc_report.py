#!/usr/bin/env python3
"""alloc_report.py RESULTS: bench/profiler/alloc.sh's results ("CONFIG
ROUND CPU_MS WALL_MS EXTRA" lines) as a table: per configuration the
median CPU time, its ratio to its base (heap to heap-base, the others to
base) with the range of the per-round ratios, the median wall time, and
the median of EXTRA (alloc stacks taken; heap walks:ms)."""
import statistics
import sys
from collections import defaultdict

rows = defaultdict(dict)
extra = defaultdict(list)
order = []
for line in open(sys.argv[1]):
    cfg, r, cpu, wall, ex = line.split()
    if cfg not in order:
        order.append(cfg)
    rows[cfg][int(r)] = (int(cpu), int(wall))
    if ex != "-":
        extra[cfg].append(ex)

print("| configuration | CPU ms (median) | CPU ratio (median, range of rounds) | wall ms (median) | stacks taken / heap walks:ms |")
print("| --- | --- | --- | --- | --- |")
for cfg in order:
    base = "heap-base" if cfg.startswith("heap") else "base"
    cpus = [c for c, _ in rows[cfg].values()]
    walls = [w for _, w in rows[cfg].values()]
    ratios = [rows[cfg][r][0] / rows[base][r][0] for r in rows[cfg] if r in rows[base] and rows[base][r][0]]
    ex = extra.get(cfg)
    if ex and ":" in ex[0]:
        w = sorted(ex, key=lambda s: int(s.split(":")[1]))
        exs = w[len(w) // 2]
    elif ex:
        exs = str(int(statistics.median(int(x) for x in ex)))
    else:
        exs = ""
    print("| %s | %d | %.2f (%.2f-%.2f) | %d | %s |" % (
        cfg, statistics.median(cpus), statistics.median(ratios), min(ratios), max(ratios),
        statistics.median(walls), exs))

#!/usr/bin/env python3
"""Summarise bench/profiler/run.sh: medians and ratios to the base run, and
how many distinct instantiations of the workload's generic methods each
profiler's output tells apart."""
import json
import re
import statistics
import sys
from collections import defaultdict


def main():
    results, sample_log, speedscope = sys.argv[1:4]
    work = defaultdict(list)
    cpu = defaultdict(list)
    wall = defaultdict(list)
    for line in open(results):
        cfg, _, w, c, t = line.split()
        work[cfg].append(int(w))
        cpu[cfg].append(int(c))
        wall[cfg].append(int(t))
    med = {k: (statistics.median(work[k]), statistics.median(cpu[k]), statistics.median(wall[k]))
           for k in work}
    b = med["base"]
    print("%-13s %4s %9s %7s %9s %7s %9s %7s" % ("config", "runs", "work ms", "ratio", "cpu ms",
                                                  "ratio", "wall ms", "ratio"))
    for cfg in ("base", "mdprofile", "dotnet-trace", "calls-fast", "calls-slow"):
        if cfg in med:
            m = med[cfg]
            print("%-13s %4d %9.0f %7.3f %9.0f %7.3f %9.0f %7.3f" % (
                cfg, len(work[cfg]), m[0], m[0] / b[0], m[1], m[1] / b[1], m[2], m[2] / b[2]))
    if "mdprofile-short" in med and "base-short" in med:
        fixed = med["mdprofile-short"][1] - med["base-short"][1]
        steady = (med["mdprofile"][1] - b[1] - fixed) / b[1]
        print("mdprofile fixed cost %.0f ms CPU (10 rounds: %.0f against %.0f ms); "
              "sampling beyond it: %+.1f%% CPU" % (fixed, med["mdprofile-short"][1],
                                                  med["base-short"][1], 100 * steady))
    for name in ("mdprofile", "dotnet-trace", "calls-fast", "calls-slow"):
        if name in med:
            m = med[name]
            print("overhead %-12s work %+6.1f%%  cpu %+6.1f%%  wall %+6.1f%%" % (
                name, 100 * (m[0] / b[0] - 1), 100 * (m[1] / b[1] - 1), 100 * (m[2] / b[2] - 1)))
    # The spread: CPU time of each configuration, min-max over the rounds,
    # and each round's ratio to the base run of the same round (the rounds
    # take turns, so a busy spell hits every configuration of a round).
    rounds = defaultdict(dict)
    for line in open(results):
        cfg, r, _, c, _ = line.split()
        rounds[r][cfg] = int(c)
    print("%-15s %9s %13s %23s" % ("config", "cpu ms", "min-max", "ratio to base, min-max"))
    for cfg in ("base", "mdprofile", "dotnet-trace", "calls-fast", "calls-slow", "base-short",
                "mdprofile-short"):
        if cfg not in cpu:
            continue
        base = "base-short" if cfg.endswith("-short") else "base"
        ratios = [rr[cfg] / rr[base] for rr in rounds.values() if cfg in rr and rr.get(base)]
        print("%-15s %9.0f %6d-%-6d %8.3f (%.3f-%.3f)" % (
            cfg, statistics.median(cpu[cfg]), min(cpu[cfg]), max(cpu[cfg]),
            statistics.median(ratios), min(ratios), max(ratios)))

    # Distinct instantiations of Gen.Work and Gen+Inner.Deep named.
    ours = set()
    for line in open(sample_log):
        if line.startswith("#") or "\t" not in line:
            continue
        for n in line.rstrip("\n").split("\t")[1:]:
            if re.search(r"Mdp\.Work\.Gen(\+Inner)?<.*>::(Work|Deep)<", n):
                ours.add(n)
    theirs = set()
    # A missing or unreadable trace is an error, not "dotnet-trace 0": that
    # hid a wrong file name for a whole session.
    try:
        frames = json.load(open(speedscope))["shared"]["frames"]
    except (OSError, ValueError, KeyError) as e:
        sys.exit("report.py: cannot read dotnet-trace's frames from %s: %s" % (speedscope, e))
    for f in frames:
        if re.search(r"Mdp\.Work\.Gen`1(\+Inner`1)?\[.*\]\.(Work|Deep)\(", f["name"]):
            theirs.add(f["name"])
    print("distinct Gen.Work / Gen+Inner.Deep instantiations named: mdprofile %d, dotnet-trace %d"
          % (len(ours), len(theirs)))
    for n in sorted(ours):
        print("  mdprofile:    " + n)
    for n in sorted(theirs):
        print("  dotnet-trace: " + n)


if __name__ == "__main__":
    main()

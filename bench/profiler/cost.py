#!/usr/bin/env python3
"""The profiler's cost per signal and its overhead at 1 kHz, from the logs
of a profiler built with -DMDP_BENCH_CLOCK (bench/profiler/cost.sh).

Each log's last #stats line carries, besides signals=:
  bench.handler_cpu_ns  the thread CPU time spent walking stacks in the
                        SIGPROF handler (clock_gettime around take_sample),
  bench.clock_ns        what two back-to-back reads of that clock measure
                        (subtracted once per call),
  bench.handler_ticks   the same walks in TSC ticks (bench.tsc_per_us),
  bench.handler_calls, bench.handler_frames,
  bench.drain_ns        the drain thread's CPU time (bench.drain_all_ns: the
                        part in mdp_drain_all),
  bench.process_cpu_us  every thread's CPU time when the line was written.
What the kernel spends delivering each signal and returning from it is not
visible from inside: --delivery MIN,MEDIAN,MAX ns per signal (from
`bench/profiler/handler signal`) is added per signal.

Logs are named WORKLOAD.short.RUN.log and WORKLOAD.long.RUN.log (1 and 4 s
of CPU time). Per workload:
  handler per signal   CPU time per call, every run;
  drain per signal     mdp_drain_all's CPU time, the slope between the short
                       and the long run of the same round,
                       (long - short) / (signals_long - signals_short): the
                       drain's fixed cost (names resolved once, the ELF
                       table) drops out;
  rest of the drain    the drain thread's other CPU time (waking every 20
                       ms, housekeeping, periodic log writes, thread scans),
                       the same slope against the program's CPU time: a
                       share of CPU that follows time, not signals;
  overhead at 1 kHz    (handler + delivery + drain) per signal x 1000
                       signals per CPU second + the rest's share: what
                       profiling costs if every millisecond of CPU time gets
                       its own signal. This kernel delivers CPU-time signals
                       at its tick (HZ 250: signals/CPU-s as run), each
                       signal standing for ~4 periods, so the per-signal
                       part is an upper bound, ~4x its cost here;
  as run               (handler + delivery + all the drain thread's CPU
                       time) / the rest of the process's CPU time, long runs:
                       the fixed costs included, at the signal rate the
                       kernel gave.
Each figure is the median over runs (or rounds) with the range (min-max);
the ranges of the overheads also take the delivery cost's range."""
import argparse
import os
import re
import statistics
import sys


def stats_of(path):
    last = None
    with open(path, errors="replace") as f:
        for line in f:
            if line.startswith("#stats "):
                last = line
    if last is None:
        raise SystemExit(f"{path}: no #stats line (the run did not end cleanly)")
    kv = dict(m.groups() for m in re.finditer(r"(\S+)=(\S+)", last))
    if "bench.handler_ticks" not in kv:
        raise SystemExit(f"{path}: no bench.* figures in #stats: not a -DMDP_BENCH_CLOCK profiler")
    return kv


def median_range(v, fmt):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delivery", default="0,0,0", help="MIN,MEDIAN,MAX ns per signal")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    dmin, dmed, dmax = (float(x) for x in a.delivery.split(","))
    runs = {}  # workload -> length -> round -> figures
    for p in a.logs:
        kv = stats_of(p)
        parts = os.path.basename(p).split(".")
        if len(parts) != 4 or parts[1] not in ("short", "long"):
            raise SystemExit(f"{p}: not named WORKLOAD.short|long.RUN.log")
        calls = int(kv["bench.handler_calls"])
        if not calls:
            raise SystemExit(f"{p}: no signal reached the handler")
        tsc_per_ns = float(kv["bench.tsc_per_us"]) / 1000.0
        if tsc_per_ns <= 0:
            raise SystemExit(f"{p}: bench.tsc_per_us is not a rate")
        handler = int(kv["bench.handler_cpu_ns"]) - calls * float(kv["bench.clock_ns"])
        runs.setdefault(parts[0], {}).setdefault(parts[1], {})[parts[2]] = {
            "calls": calls,
            "frames": int(kv["bench.handler_frames"]),
            "handler": handler,
            "ticks_ns": int(kv["bench.handler_ticks"]) / tsc_per_ns,
            "drain": int(kv["bench.drain_ns"]),
            "drain_all": int(kv["bench.drain_all_ns"]),
            "proc": int(kv["bench.process_cpu_us"]) * 1000.0,
        }
    print(f"delivery and return of a signal (kernel, added per signal): {dmed:.0f} ns ({dmin:.0f}-{dmax:.0f})")
    print("| workload | rounds | signals/CPU-s as run | frames per walk | handler ns per signal (CPU clock) "
          "| handler, TSC | ns per frame | drain ns per signal (mdp_drain_all, slope) "
          "| rest of the drain thread, per CPU-s (slope) | ns per signal: handler + delivery + drain "
          "| overhead at 1 kHz | as run (long runs) |")
    print("| --- " * 12 + "|")
    for name in sorted(runs):
        all_runs = [r for length in runs[name].values() for r in length.values()]
        h = [r["handler"] / r["calls"] for r in all_runs]
        tk = [r["ticks_ns"] / r["calls"] for r in all_runs]
        fr = [r["frames"] / r["calls"] for r in all_runs]
        pf = [r["handler"] / r["frames"] for r in all_runs if r["frames"]]
        rate = [r["calls"] / ((r["proc"] - r["handler"] - r["calls"] * dmed - r["drain"]) / 1e9)
                for r in all_runs]
        short, long_ = runs[name].get("short", {}), runs[name].get("long", {})
        pairs = [(short[k], long_[k]) for k in short if k in long_ and long_[k]["calls"] > short[k]["calls"]]
        if not pairs:
            raise SystemExit(f"{name}: no round with a short and a longer long run")
        def app(r, d):
            return r["proc"] - r["handler"] - r["calls"] * d - r["drain"]

        dra = [(l["drain_all"] - s["drain_all"]) / (l["calls"] - s["calls"]) for s, l in pairs]
        rest = [100 * ((l["drain"] - l["drain_all"]) - (s["drain"] - s["drain_all"])) / (app(l, dmed) - app(s, dmed))
                for s, l in pairs]
        hm, dm, rm = statistics.median(h), statistics.median(dra), statistics.median(rest)
        per_signal = hm + dmed + dm
        lo = (min(h) + dmin + min(dra)) / 1e4 + min(rest)
        hi = (max(h) + dmax + max(dra)) / 1e4 + max(rest)
        as_run = []
        for r in long_.values():
            for d in (dmin, dmax):
                as_run.append(100 * (r["handler"] + r["calls"] * d + r["drain"]) / app(r, d))
        run_med = statistics.median([100 * (r["handler"] + r["calls"] * dmed + r["drain"]) / app(r, dmed)
                                     for r in long_.values()])
        print(f"| {name} | {len(pairs)} | {median_range(rate, '{:.0f}')} | {median_range(fr, '{:.1f}')} "
              f"| {median_range(h, '{:.0f}')} | {median_range(tk, '{:.0f}')} | {median_range(pf, '{:.0f}')} "
              f"| {median_range(dra, '{:.0f}')} | {median_range(rest, '{:.2f}%')} "
              f"| {per_signal:.0f} | {per_signal / 1e4 + rm:.2f}% ({lo:.2f}-{hi:.2f}%) "
              f"| {run_med:.2f}% ({min(as_run):.2f}-{max(as_run):.2f}%) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

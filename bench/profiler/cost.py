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
  bench.process_cpu_us  every thread's CPU time when the line was written,
  bench.cb_KIND_ns, bench.cb_KIND_calls  the thread CPU time and calls of
                        the runtime's load callbacks (KIND class, jit, r2r:
                        a ReadyToRun method found, other: modules, unloads),
                        which --each reports apart and with the rest.
What the kernel spends delivering each signal and returning from it is not
visible from inside: --delivery MIN,MEDIAN,MAX ns per signal (from
`bench/profiler/handler signal`) is added per signal.

Logs are named WORKLOAD.LENGTH.ROUND.log: short and long (1 and 4 s of
CPU time at 1 kHz), slow (4 s at 100 Hz). Per workload:
  handler per signal   CPU time per call, every run;
  drain                the drain thread's CPU time, split per round exactly
                       (its short, long and slow runs: three equations) into
                       a cost per signal, a cost per drain pass (one every 20
                       ms of wall time: waking, scanning the slots,
                       housekeeping, periodic log writes) and a fixed cost
                       (names resolved once, the ELF table, the header);
                       mdp_drain_all's part of the per-signal cost likewise;
  overhead at 1 kHz    (handler + delivery + drain) per signal x 1000
                       signals per CPU second + the passes' share of the
                       program's CPU time: what profiling costs if every
                       millisecond of CPU time gets its own signal. This
                       kernel delivers CPU-time signals at its tick (HZ 250:
                       signals/CPU-s as run), each signal standing for ~4
                       periods, so the per-signal part is an upper bound, ~4x
                       its cost here;
  as run               (handler + delivery + all the drain thread's CPU
                       time) / the rest of the process's CPU time, long runs:
                       the fixed costs included, at the signal rate the
                       kernel gave.
Since the drain's period adapts (drain.c: 20 ms doubling to 320 ms while
the rings stay nearly empty), the number of passes follows the signals
and the split into per-signal, per-pass and fixed costs is ill-conditioned
(it can come out negative): read the as-run figures, and --each's drain
passes per second and drain time per second outside mdp_drain_all.
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


def callbacks(kv):
    """The load callbacks' CPU ns by kind (class, jit, r2r, other), one
    clock read subtracted per call as for the handler; None from a profiler
    that did not count them."""
    if "bench.cb_class_ns" not in kv:
        return None
    clock = float(kv["bench.clock_ns"])
    return [max(0.0, int(kv[f"bench.cb_{k}_ns"]) - int(kv[f"bench.cb_{k}_calls"]) * clock)
            for k in ("class", "jit", "r2r", "other")]


def app(r, d):
    """The program's own CPU time: the process's less the profiler's."""
    return r["proc"] - r["handler"] - r["calls"] * d - r["drain"]


def solve3(A, y):
    """A x = y for a 3x3 A (Gaussian elimination, partial pivoting)."""
    M = [list(map(float, row)) + [float(b)] for row, b in zip(A, y)]
    for i in range(3):
        p = max(range(i, 3), key=lambda r: abs(M[r][i]))
        M[i], M[p] = M[p], M[i]
        if M[i][i] == 0:
            raise ZeroDivisionError
        for r in range(3):
            if r != i:
                f = M[r][i] / M[i][i]
                M[r] = [a - f * b for a, b in zip(M[r], M[i])]
    return [M[i][3] / M[i][i] for i in range(3)]


def median_range(v, fmt):
    return f"{fmt.format(statistics.median(v))} ({fmt.format(min(v))}-{fmt.format(max(v))})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--delivery", default="0,0,0", help="MIN,MEDIAN,MAX ns per signal")
    ap.add_argument("--each", action="store_true",
                    help="one line per log, as run (any program: a dotnet build's logs)")
    ap.add_argument("logs", nargs="+")
    a = ap.parse_args()
    dmin, dmed, dmax = (float(x) for x in a.delivery.split(","))
    if a.each:
        print("| log | signals | frames per walk | handler ns per signal | drain ms | of which mdp_drain_all "
              "| drain passes | passes per s | drain ms per s (outside mdp_drain_all) "
              "| records | process CPU ms | profiler, as run | load callbacks ms (class/jit/r2r/other) "
              "| profiler with its callbacks |")
        print("| --- " * 14 + "|")
        for p in a.logs:
            kv = stats_of(p)
            calls = int(kv["bench.handler_calls"])
            r = {"calls": calls, "handler": int(kv["bench.handler_cpu_ns"]) - calls * float(kv["bench.clock_ns"]),
                 "drain": int(kv["bench.drain_ns"]), "proc": int(kv["bench.process_cpu_us"]) * 1000.0}
            share = [100 * (r["handler"] + calls * d + r["drain"]) / app(r, d) for d in (dmin, dmed, dmax)]
            cb, cbtext, withcb = callbacks(kv), "-", "-"
            if cb is not None:
                cbtext = f"{sum(cb) / 1e6:.1f} ({'/'.join(f'{x / 1e6:.1f}' for x in cb)})"
                w = [100 * (r["handler"] + calls * d + r["drain"] + sum(cb)) / (app(r, d) - sum(cb))
                     for d in (dmin, dmed, dmax)]
                withcb = f"{w[1]:.2f}% ({w[0]:.2f}-{w[2]:.2f}%)"
            passes, wall_s = int(kv["drains"]), max(int(kv["duration_ms"]), 1) / 1e3
            print(f"| {os.path.basename(p)} | {calls} | {int(kv['bench.handler_frames']) / max(calls, 1):.1f} "
                  f"| {r['handler'] / max(calls, 1):.0f} | {r['drain'] / 1e6:.1f} "
                  f"| {int(kv['bench.drain_all_ns']) / 1e6:.1f} | {passes} | {passes / wall_s:.1f} "
                  f"| {(r['drain'] - int(kv['bench.drain_all_ns'])) / 1e6 / wall_s:.2f} "
                  f"| {kv['records']} | {r['proc'] / 1e6:.0f} "
                  f"| {share[1]:.2f}% ({share[0]:.2f}-{share[2]:.2f}%) | {cbtext} | {withcb} |")
        return 0
    runs = {}  # workload -> length -> round -> figures
    for p in a.logs:
        kv = stats_of(p)
        parts = os.path.basename(p).split(".")
        if len(parts) != 4 or parts[1] not in ("short", "long", "slow"):
            raise SystemExit(f"{p}: not named WORKLOAD.short|long|slow.RUN.log")
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
            "passes": int(kv["drains"]),
        }
    print(f"delivery and return of a signal (kernel, added per signal): {dmed:.0f} ns ({dmin:.0f}-{dmax:.0f})")
    print("| workload | rounds | signals/CPU-s at 1 kHz as run | frames per walk | handler ns per signal (CPU clock) "
          "| handler, TSC | ns per frame | drain ns per signal | of which mdp_drain_all "
          "| drain ns per pass | drain fixed ms | ns per signal: handler + delivery + drain "
          "| overhead at 1 kHz | as run (long runs) |")
    print("| --- " * 14 + "|")
    for name in sorted(runs):
        all_runs = [r for length in runs[name].values() for r in length.values()]
        h = [r["handler"] / r["calls"] for r in all_runs]
        tk = [r["ticks_ns"] / r["calls"] for r in all_runs]
        fr = [r["frames"] / r["calls"] for r in all_runs]
        pf = [r["handler"] / r["frames"] for r in all_runs if r["frames"]]
        rate = [r["calls"] / (app(r, dmed) / 1e9)
                for length in ("short", "long") for r in runs[name].get(length, {}).values()]
        long_ = runs[name].get("long", {})
        # per round: drain = a x signals + b x passes + c, exactly, from its
        # short, long and slow runs
        fits = []
        for k in runs[name].get("short", {}):
            trio = [runs[name].get(x, {}).get(k) for x in ("short", "long", "slow")]
            if None in trio:
                continue
            A = [[r["calls"], r["passes"], 1.0] for r in trio]
            try:
                da = solve3(A, [r["drain_all"] for r in trio])
                dt = solve3(A, [r["drain"] for r in trio])
            except ZeroDivisionError:
                continue
            passes_per_cpu_s = statistics.median(r["passes"] / (app(r, dmed) / 1e9) for r in trio)
            fits.append({"sig_all": da[0], "sig": dt[0], "pass": dt[1], "fixed": dt[2],
                         "pass_share": 100 * dt[1] * passes_per_cpu_s / 1e9})
        if not fits:
            raise SystemExit(f"{name}: no round with a short, a long and a slow run")
        sig = [f["sig"] for f in fits]
        sig_all = [f["sig_all"] for f in fits]
        per_pass = [f["pass"] for f in fits]
        share = [f["pass_share"] for f in fits]
        fixed = [f["fixed"] / 1e6 for f in fits]
        hm, sm, pm = statistics.median(h), statistics.median(sig), statistics.median(share)
        per_signal = hm + dmed + sm
        lo = (min(h) + dmin + min(sig)) / 1e4 + min(share)
        hi = (max(h) + dmax + max(sig)) / 1e4 + max(share)
        as_run = []
        for r in long_.values():
            for d in (dmin, dmax):
                as_run.append(100 * (r["handler"] + r["calls"] * d + r["drain"]) / app(r, d))
        run_med = statistics.median([100 * (r["handler"] + r["calls"] * dmed + r["drain"]) / app(r, dmed)
                                     for r in long_.values()])
        print(f"| {name} | {len(fits)} | {median_range(rate, '{:.0f}')} | {median_range(fr, '{:.1f}')} "
              f"| {median_range(h, '{:.0f}')} | {median_range(tk, '{:.0f}')} | {median_range(pf, '{:.0f}')} "
              f"| {median_range(sig, '{:.0f}')} | {median_range(sig_all, '{:.0f}')} "
              f"| {median_range(per_pass, '{:.0f}')} | {median_range(fixed, '{:.1f}')} "
              f"| {per_signal:.0f} | {per_signal / 1e4 + pm:.2f}% ({lo:.2f}-{hi:.2f}%) "
              f"| {run_med:.2f}% ({min(as_run):.2f}-{max(as_run):.2f}%) |")
    return 0


if __name__ == "__main__":
    sys.exit(main())

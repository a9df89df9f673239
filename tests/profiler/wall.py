#!/usr/bin/env python3
"""Check logs of wall-clock mode (`mdprofile --mode wall`, issue 27):

    wall.py wall LOG EXPECTED --assemblies DIR...
        `Workload wall` (data/profiler/Workload/Wall.cs): the checks of
        every sample log (format 4, statistics, every frame of the program
        named as the program names it, the log resolved offline in five
        formats: check.py, offline.py); the header's clock=wall and
        budget=; then thread by thread, by the TID the program read itself:
        every record's leaf is a state (state:WORD), and the thread's state
        is the one it was put in for at least 80% of its samples (Waiter
        waiting:Monitor.Wait, Sleeper sleeping, Reader syscall, Spinner
        running; measured: 99-100%); its samples (1 ms each at rate=1000)
        are its wall time within 20% (measured: within 1%), and the four
        are equal within 20%; `--top` prints the states as
        `[waiting: Monitor.Wait]`, `[sleeping]`, `[blocked in syscall]`,
        `[running]`, and `--top --thread Waiter` has the wait first; the
        pprof file's sample type is wall nanoseconds (go tool pprof -raw
        when go is installed); the log cut anywhere and odd state frames:
        batch exits 0, 1 (a line not resolved), 4 or 5 (cut short)
        in every format, never dies of a signal.
    wall.py idle LOG EXPECTED MS N
        `Workload idle` with N threads in Monitor.Wait for MS ms: every one
        of them entered it before the release and none returned early
        (the signals wake no wait), every one sampled and mostly blocked,
        90% of all their samples blocked and 80% waiting:Monitor.Wait
        (measured 98.7%, the wait inlined into the tier-1 lambda named
        from its IL), 95% of them with samples for at least 75% of MS
        less 1.5 sampling intervals of a thread and at most the run, and the
        signals sent (#stats wall.sent=) within the budget: at most
        budget x (duration + 1 s).

Prints one line per check, then "N passed, M failed"."""
import gzip
import os
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict

import check
import mdtcheck  # tests/common, on the path check.py sets
import offline
from check import ok

WANT = {"Waiter": "state:waiting:Monitor.Wait", "Sleeper": "state:sleeping",
        "Reader": "state:syscall", "Spinner": "state:running"}
TEXT = {"state:waiting:Monitor.Wait": "[waiting: Monitor.Wait]", "state:sleeping": "[sleeping]",
        "state:syscall": "[blocked in syscall]", "state:running": "[running]"}


def batch(dirs, data, *args):
    build = os.environ.get("MDT_BUILDDIR", "")
    mdinspect = os.environ.get("MDT_MDINSPECT", os.path.join(build, "mdinspect", "mdinspect"))
    cmd = [mdinspect, "batch", "--no-progress"] + [x for d in dirs for x in ("-a", d)] + list(args)
    r = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout, r.stderr.decode("utf-8", "replace")


def per_thread(log):
    count, states = Counter(), defaultdict(Counter)
    leaf_ok = True
    for (kind, c, _, frames, _), ts in zip(log.records, log.slices):
        if kind != "stack" or not ts:
            continue
        count[ts[0]] += c
        states[ts[0]][frames[0]] += c
        leaf_ok = leaf_ok and frames[0].startswith("state:")
    return count, states, leaf_ok


def wall(path, expected, dirs):
    log = check.Log(path)
    names, facts = check.read_expected(expected)
    check.check_format(log, "wall")
    h = log.header
    ok(h.get("clock") == "wall" and h.get("budget", "").isdigit() and h.get("rate") == "1000",
       "header: clock=wall budget=N rate=1000 (%s, %s, %s)" % (h.get("clock"), h.get("budget"), h.get("rate")))
    mvids = set(facts["module"])
    check.check_names(log, names, mvids, "wall")
    offline.resolve(ok, path, log, names, facts, mvids, dirs)
    threads = {}
    for f in facts["wall"]:
        name, tid, start, end = f.split(" ")
        threads[name] = (int(tid), int(end) - int(start))
    if not ok(sorted(threads) == sorted(WANT), "the program reports its four threads (%s)" % sorted(threads)):
        return
    count, states, leaf_ok = per_thread(log)
    ok(leaf_ok, "every record's leaf is a state frame")
    for name, (tid, ms) in sorted(threads.items()):
        lines = log.threads.get(tid, [])
        ok(lines and lines[-1][1].get("name") == name,
           "thread %s (tid %d) has its #thread line" % (name, tid))
        st = states[tid]
        share = st[WANT[name]] / max(count[tid], 1)
        ok(share >= 0.8, "thread %s: %s in %.1f%% of its samples (80%% wanted): %s"
           % (name, WANT[name], 100 * share, dict(st)))
        ok(abs(count[tid] - ms) <= 0.2 * ms,
           "thread %s: %d samples for %d ms of its wall time (within 20%%)" % (name, count[tid], ms))
    counts = [count[threads[n][0]] for n in WANT]
    mean = sum(counts) / 4.0
    ok(all(abs(c - mean) <= 0.2 * mean for c in counts),
       "the four threads have equal wall shares within 20%% (%s)" % counts)

    data = open(path, "rb").read()
    st, out, err = batch(dirs, data, "--top", "40")
    out = out.decode("utf-8", "replace")
    ok(all(t in out for t in TEXT.values()),
       "--top prints the four states as %s" % ", ".join(t for t in TEXT.values()))
    st, out, err = batch(dirs, data, "--top", "3", "--thread", "Waiter")
    first = [x for x in out.decode("utf-8", "replace").splitlines() if re.match(r"\s+\d+ ", x)][:1]
    ok(first and first[0].endswith("[waiting: Monitor.Wait]"),
       "--top --thread Waiter: the wait first (%s)" % (first[0].strip() if first else None))
    # pprof: wall nanoseconds, the state a function of its own
    st, out, err = batch(dirs, data, "--pprof")
    raw = gzip.decompress(out) if st == 0 else b""
    ok(b"wall" in raw and b"nanoseconds" in raw and b"[waiting: Monitor.Wait]" in raw,
       "--pprof: sample type wall nanoseconds, the states as functions")
    if shutil.which("go"):
        pb = path + ".pb.gz"
        with open(pb, "wb") as fh:
            fh.write(out)
        r = subprocess.run(["go", "tool", "pprof", "-raw", pb], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        txt = r.stdout.decode("utf-8", "replace")
        ok(r.returncode == 0 and "PeriodType: wall nanoseconds" in txt and "wall/nanoseconds[dflt]" in txt,
           "go tool pprof -raw reads it: PeriodType wall nanoseconds, the default sample type")
    damaged(dirs, data)


def damaged(dirs, data):
    """The log cut anywhere (40 places, and inside a state frame), and odd
    state frames: batch never dies of a signal, in any format."""
    cuts = sorted(set([len(data) * k // 40 for k in range(1, 40)] +
                      [data.index(b"state:waiting:") + k for k in (3, 6, 9, 16, 20)]))
    odd = b"".join(b"stack 3 77 0 " + f + b" native\n" for f in
                   (b"state:", b"state", b"state:waiting:", b"state::", b"state:waiting:A:B:C",
                    b"state:" + b"x" * 5000, b"state:%00", b"state:\xff\xfe", b"state:running\r"))
    inputs = [data[:c] for c in cuts] + [data.split(b"\n", 1)[0] + b"\n" + odd]
    died = []
    for i, d in enumerate(inputs):
        for fmt in ((), ("--top", "5"), ("--folded",), ("--json",), ("--speedscope",), ("--pprof",)):
            st, _, err = batch(dirs, d, *fmt)
            # 1: a line not resolved, 4: a log cut short (MDB_EXIT_*); a
            # negative status is a signal
            if st not in (0, 1, 4, 5) or "runtime error" in err or "Sanitizer" in err:
                died.append("%s %s: %d %s" % (i, fmt, st, err[-200:]))
    ok(not died, "%d cut or odd logs in 6 formats: batch exits 0, 1, 4 or 5, no signal%s"
       % (len(inputs), (": " + "; ".join(died[:3])) if died else ""))


def idle(path, expected, ms, n):
    log = check.Log(path)
    names, facts = check.read_expected(expected)
    check.check_format(log, "wall")
    ok(facts["idle"] == [str(n)], "the program started %d threads (%s)" % (n, facts["idle"]))
    count, states, leaf_ok = per_thread(log)
    ok(leaf_ok, "every record's leaf is a state frame")
    # the signals wake no Monitor.Wait before its pulse (the host sees no
    # EINTR), and every thread got into it before the release
    ok(facts["entered"] == [str(n)] and facts["early"] == ["0"],
       "every thread entered Monitor.Wait before the release (%s), none returned early (%s)"
       % (facts["entered"], facts["early"]))
    # A thread is blocked: waiting:Monitor.Wait, by its frame or, once the
    # lambda is compiled at tier 1 and the JIT inlined Monitor.Wait(object)
    # into it, by the call at the lambda's IL offset (frames.c); a sample
    # counts the time since the thread's last (half a second here), in the
    # state of its instant (a first one may find the thread starting).
    blocked = [t for t in count if states[t].most_common(1)[0][0] in
               ("state:waiting:Monitor.Wait", "state:syscall")]
    ok(len(blocked) >= n, "%d threads (of %d sampled) mostly blocked, %d wanted" % (len(blocked), len(count), n))
    w = sum(states[t]["state:waiting:Monitor.Wait"] + states[t]["state:syscall"] for t in blocked)
    a = sum(count[t] for t in blocked)
    named = sum(states[t]["state:waiting:Monitor.Wait"] for t in blocked)
    ok(w >= 0.9 * a and named >= 0.8 * a,
       "they are blocked in %.1f%% of their samples (90%% wanted), %.1f%% waiting:Monitor.Wait (80%% wanted)"
       % (100.0 * w / max(a, 1), 100.0 * named / max(a, 1)))
    waiting = blocked
    # every idle thread lives at least MS (started before the main thread
    # sleeps MS, released after) and at most the run (a loaded machine may
    # take seconds to start 1,000 threads); its time after its last sample
    # is not counted: at most about one interval between two of its
    # samples (the run x the threads / the signals sent: 0.5 s on a quiet
    # machine; seconds when the wall thread is starved)
    s = log.stats or {}
    run = int(s.get("duration_ms", 0))
    sent = max(int(s.get("wall.sent", 0)), 1)
    gap = run * len(count) / sent
    near = [t for t in waiting if 0.75 * ms - 1.5 * gap <= count[t] <= 1.25 * run]
    ok(len(near) >= 0.95 * n, "%d of them have samples for at least 75%% of %d ms less 1.5 x %.0f ms "
       "(a thread's interval between samples) and at most the run's %d ms" % (len(near), ms, gap, run))
    budget = int(log.header.get("budget", "0"))
    sent = int(s.get("wall.sent", -1))
    limit = budget * (int(s.get("duration_ms", 0)) + 1000) // 1000
    ok(0 < sent <= limit, "signals sent %d within the budget: at most %d (budget %d/s x (%s ms + 1 s))"
       % (sent, limit, budget, s.get("duration_ms")))


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) == 3 and argv[0] == "wall" and dirs:
        wall(argv[1], argv[2], dirs)
    elif len(argv) == 5 and argv[0] == "idle":
        idle(argv[1], argv[2], int(argv[3]), int(argv[4]))
    else:
        print(__doc__)
        return 2
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

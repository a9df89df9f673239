#!/usr/bin/env python3
"""Check a log of `Workload threads` (data/profiler/Workload/Threads.cs,
issue 27): the checks of every sample log (format 4, statistics, every
frame of the program named as the program names it, the log resolved
offline in four formats: check.py, offline.py), then thread by thread:

- every thread the program started has its #thread line, by the TID the
  program read itself (gettid): `managed=1`, `name=` the name it gave
  (Worker-A, Worker-B, Late), none for the unnamed one;
- each thread's samples (its records' counts, at 1 ms a sample) are its
  CPU time within 25% (measured: a few percent), and the shares hold:
  Worker-A 2x Worker-B, the unnamed thread 1x Worker-B, within 25%;
- Late, which slept 2.3 s before it burned, has no record in slices 0
  and 1 (slice=1000), and its first busy slice is the one its burn
  started in (or the next);
- `mdinspect batch --speedscope`: one profile per thread, "NAME (tid N)"
  (the unnamed one by its kernel name, inherited: "dotnet"), in milliseconds, samples in time order: Late's starts
  with an empty sample of at least 2000 ms, each thread's weights sum to
  its samples x 1 ms;
- `--top 5 --thread NAME` and `--thread TID` count that thread's samples
  alone (the header line's total), `--folded --from 2` keeps the records
  of slices 2 and later, `--to 2` those before.

    threads.py LOG EXPECTED --assemblies DIR...

Prints one line per check, then "N passed, M failed"."""
import json
import os
import re
import subprocess
import sys
from collections import Counter, defaultdict

import check
import mdtcheck  # tests/common, on the path check.py sets
import offline
from check import ok

TOL = 0.25


def near(a, b):
    return b > 0 and abs(a - b) <= TOL * b


def batch(dirs, log_path, *args):
    build = os.environ.get("MDT_BUILDDIR", "")
    mdinspect = os.environ.get("MDT_MDINSPECT", os.path.join(build, "mdinspect", "mdinspect"))
    cmd = [mdinspect, "batch", "--no-progress"] + [x for d in dirs for x in ("-a", d)] + list(args)
    with open(log_path, "rb") as i:
        r = subprocess.run(cmd, stdin=i, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode("utf-8", "replace")


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) != 2 or not dirs:
        print(__doc__)
        return 2
    path, expected = argv
    log = check.Log(path)
    names, facts = check.read_expected(expected)
    check.check_format(log, "sample")
    mvids = set(facts["module"])
    ok(len(mvids) == 1, "the program printed its module's MVID")
    check.check_names(log, names, mvids, "threads")
    framed = offline.resolve(ok, path, log, names, facts, mvids, dirs)

    ok(log.header.get("slice") == "1000" and log.header.get("rate") == "1000",
       "header: rate=1000 slice=1000 (%s, %s)" % (log.header.get("rate"), log.header.get("slice")))
    threads = {}  # name -> (tid, cpu ms, start ms)
    for f in facts["thread"]:
        name, tid, cpu, start = f.split(" ")
        threads[name] = (int(tid), float(cpu), float(start))
    ok(sorted(threads) == ["-", "Late", "Worker-A", "Worker-B"],
       "the program reports its four threads (%s)" % sorted(threads))
    if sorted(threads) != ["-", "Late", "Worker-A", "Worker-B"]:
        mdtcheck.closing()
        return 1
    count = Counter()
    slices = defaultdict(Counter)
    for (kind, c, _, _, _), ts in zip(log.records, log.slices):
        if ts:
            count[ts[0]] += c
            slices[ts[0]][ts[1]] += c
    for name, (tid, cpu, start) in sorted(threads.items()):
        lines = log.threads.get(tid, [])
        last = lines[-1][1] if lines else {}
        want = None if name == "-" else name
        ok(lines and last.get("managed") == "1" and last.get("name") == want,
           "thread %s (tid %d): its #thread line says managed=1 and name=%s (%s)"
           % (name, tid, want, " | ".join(str(kv) for _, kv in lines) or "none"))
        ok(near(count[tid], cpu),
           "thread %s (tid %d): %d samples for %.0f ms of its CPU time (within %d%%)"
           % (name, tid, count[tid], cpu, TOL * 100))
    a, b, u = (count[threads[k][0]] for k in ("Worker-A", "Worker-B", "-"))
    ok(near(a, 2 * b), "Worker-A has twice Worker-B's samples: %d and %d (%.2f, 2 +-%d%%)"
       % (a, b, a / max(b, 1), TOL * 100))
    ok(near(u, b), "the unnamed thread has Worker-B's samples: %d and %d (%.2f, 1 +-%d%%)"
       % (u, b, u / max(b, 1), TOL * 100))
    late, _, late_start = threads["Late"]
    first = min(slices[late]) if slices[late] else None
    # from its wake (2.3 s: slice 2) on: the perf clock's 1 ms resolution
    # sees the few ms of CPU between the wake and the burn, which a
    # loaded machine (ASan) may stretch past a slice's end
    ok(first is not None and first >= 2 and first <= int(late_start // 1000) + 1,
       "Late, busy from %.0f ms, has no samples before slice 2; its first is slice %s (%s)"
       % (late_start, first, dict(sorted(slices[late].items()))))
    main_tid = int(facts["main"][0]) if facts["main"] else 0
    ok(main_tid in log.threads, "the main thread (tid %d) has its #thread line" % main_tid)

    # speedscope: a profile per thread, in time order
    status, out = batch(dirs, path, "--speedscope")
    try:
        ss = json.loads(out)
        profs = {p["name"]: p for p in ss["profiles"]}
    except (ValueError, KeyError) as e:
        ok(False, "speedscope output parses: %s" % e)
        profs = {}
    for name, (tid, _, _) in sorted(threads.items()):
        # the unnamed thread goes by its kernel name (inherited: "dotnet")
        os_name = (log.threads.get(tid) or [(0, {})])[-1][1].get("os")
        title = "%s (tid %d)" % (name if name != "-" else os_name, tid) if name != "-" or os_name \
            else "tid %d" % tid
        p = profs.get(title)
        ok(p and p["unit"] == "milliseconds" and round(sum(w for s, w in zip(p["samples"], p["weights"]) if s)) == count[tid],
           "speedscope: profile %r in milliseconds, its weights %s = its samples %d"
           % (title, round(sum(w for s, w in zip(p["samples"], p["weights"]) if s)) if p else None, count[tid]))
    p = profs.get("Late (tid %d)" % late)
    ok(p and p["samples"] and p["samples"][0] == [] and p["weights"][0] >= 2000,
       "speedscope: Late's time order starts with %s ms of nothing (2000 at least)"
       % (p["weights"][0] if p and p["samples"] and p["samples"][0] == [] else None))

    # filters
    def total(out):
        m = re.match(r"total (\d+) samples", out)
        return int(m.group(1)) if m else None
    for name in ("Worker-A", "Late"):
        tid = threads[name][0]
        _, out = batch(dirs, path, "--top", "5", "--thread", name)
        _, out2 = batch(dirs, path, "--top", "5", "--thread", str(tid))
        ok(total(out) == count[tid] and total(out2) == count[tid],
           "--top --thread %s and --thread %d count its %d samples (%s, %s)"
           % (name, tid, count[tid], total(out), total(out2)))
    every = sum(count.values())
    after = sum(c for t in slices for s, c in slices[t].items() if s >= 2)
    _, out = batch(dirs, path, "--folded", "--from", "2")
    got = sum(int(x.rsplit(" ", 1)[1]) for x in out.splitlines() if x)
    _, out = batch(dirs, path, "--folded", "--to", "2")
    got2 = sum(int(x.rsplit(" ", 1)[1]) for x in out.splitlines() if x)
    ok(got == after and got2 == every - after,
       "--folded --from 2 keeps slices 2 and later (%d of %d), --to 2 the rest (%d of %d)"
       % (got, after, got2, every - after))
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check a log of `Workload allocstacks` (data/profiler/Workload/Allocs.cs,
issue 27) profiled with `--mode alloc --alloc-sample R` on PATH (event: the
runtime's AllocationSampled events, .NET 10; callback: ObjectAllocated,
`--alloc-path callback`): AllocA.Make
allocated 3x the System.Byte[] bytes AllocB.Make did, interleaved, and
Payloads.Make small Payload objects; the program says how many of each
("# allocated TYPE METHOD OBJECTS BYTES_EACH").

- the log: alloc's checks (check.py: format 4, #stats), `alloc_sample=R`
  (on the event path, R or the runtime's fixed mean, 102400, whichever is
  larger) and `alloc_path=PATH` in the header, `alloc.samples=` > 0 and
  `alloc.dropped=0` in #stats;
- the callback path: the exact alloc records still count every Payload
  (no sampling there); the event path: no alloc record, `alloc.callbacks=0`
  (ObjectAllocated was not enabled: the allocations kept their fast
  path), `alloc.events=` at least `alloc.samples=`;
- every astack record carries the main thread (its TID is the pid) and a
  slice;
- the sampled stacks (astack records, resolved by `mdinspect batch
  --json`): per (type, allocating method), the estimated objects and bytes
  are the program's within 4.5 standard deviations of the estimate. The
  sampler is a Poisson process over the bytes (mean R): a (type, method)
  that allocated B bytes gets about B/R samples, and its estimate has a
  relative standard deviation of about 1/sqrt(B/R) (and no more: each
  sample of an object of size s stands for 1/(1-exp(-s/R)) objects); at
  4.5 sd a correct profiler fails about once in 150,000 runs, while a
  wrong weight (1 object a sample, or R bytes) misses by far more;
- the estimates of the three (type, method) pairs sum to the bytes the
  program allocated in them within 4.5 sd of the sum (relative sd about
  1/sqrt(B/R) for B bytes in all);
- A's share of the two methods' System.Byte[] bytes is 3/4 within 4.5
  sd of a binomial share over their samples;
- every astack record of those types has the program's stack above the
  allocating method: AllocsWork::Stacks, then Program::Main;
- `batch --top N --type System.Byte[]`: who allocates System.Byte[], A
  before B, no other type; `--folded`: the astack records alone (the
  exact alloc records are not summed with them), root first, the type as
  the leaf; `--pprof` (read back by protobuf-c, tests/batch/pprof_read):
  sample types alloc_objects/count and alloc_space/bytes, the astack
  records' stacks and sums, no sample of the exact alloc records.

    allocstacks.py LOG EXPECTED R PATH --assemblies DIR...

Prints one line per check, then "N passed, M failed"."""
import json
import math
import os
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from urllib.parse import unquote

import check
import mdtcheck  # tests/common, on the path check.py sets
from check import ok

SD = 4.5


def batch(dirs, log_path, *args):
    build = os.environ.get("MDT_BUILDDIR", "")
    mdinspect = os.environ.get("MDT_MDINSPECT", os.path.join(build, "mdinspect", "mdinspect"))
    cmd = [mdinspect, "batch", "--no-progress"] + [x for d in dirs for x in ("-a", d)] + list(args)
    with open(log_path, "rb") as i:
        r = subprocess.run(cmd, stdin=i, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) != 4 or argv[3] not in ("event", "callback") or not dirs:
        print(__doc__)
        return 2
    path, rate, route = argv[0], int(argv[2]), argv[3]
    names, facts = check.read_expected(argv[1])
    log = check.Log(path)
    check.check_format(log, "alloc")
    if route == "event":
        rate = max(rate, 102400)  # the runtime's mean is fixed
    scale = "bernoulli" if route == "event" else "poisson"
    ok(log.header.get("alloc_sample") == str(rate) and log.header.get("alloc_path") == route and
       log.header.get("alloc_scale") == scale,
       "header alloc_sample=%d alloc_path=%s alloc_scale=%s (%s, %s, %s)"
       % (rate, route, scale, log.header.get("alloc_sample"), log.header.get("alloc_path"),
          log.header.get("alloc_scale")))
    st = log.stats or {}
    ok(st.get("alloc.samples", 0) > 0 and st.get("alloc.dropped") == 0,
       "stats: alloc.samples=%s > 0, alloc.dropped=%s is 0" % (st.get("alloc.samples"), st.get("alloc.dropped")))
    if route == "event":
        ok(st.get("alloc.callbacks") == 0 and not any(k == "alloc" for k, *_ in log.records),
           "event path: alloc.callbacks=%s is 0 (ObjectAllocated not enabled), no alloc record"
           % st.get("alloc.callbacks"))
        ok(st.get("alloc.events", -1) >= st.get("alloc.samples", 0),
           "event path: alloc.events=%s >= alloc.samples=%s"
           % (st.get("alloc.events"), st.get("alloc.samples")))
    else:
        ok(st.get("alloc.callbacks", 0) > 0 and "alloc.events" not in st,
           "callback path: alloc.callbacks=%s > 0, no alloc.events" % st.get("alloc.callbacks"))
    ok(any(k == "astack" for k, *_ in log.records), "the log has astack records")
    # The program allocates on its main thread; a runtime thread (the
    # finalizer, tiered compilation) may allocate enough now and then to be
    # sampled too, so the main thread must carry nearly all the bytes, and
    # every record a TID and a numeric slice.
    main_tid = log.header.get("pid")
    by_tid, slices = Counter(), set()
    for line in open(path, encoding="utf-8"):
        p = line.split("\t")[0].split(" ")
        if p[0] == "astack":
            by_tid[p[3]] += int(p[2])
            slices.add(p[4].isdigit())
    all_bytes = sum(by_tid.values())
    ok(slices == {True} and by_tid[main_tid] >= 0.95 * all_bytes,
       "astack records: the main thread's TID (%s) with %d of %d bytes, every slice numeric (%s)"
       % (main_tid, by_tid[main_tid], all_bytes, sorted(by_tid.items())[:4]))

    # the framework folder, for the framework's types and methods
    fw = unquote(log.header.get("framework", ""))
    dirs = list(dirs) + ([fw] if fw and os.path.isdir(fw) else [])
    status, out = batch(dirs, path, "--json")
    ok(status == 0, "mdinspect batch --json exits 0 (%d)" % status)
    js = [json.loads(x) for x in out.decode("utf-8").split("\n") if x]
    exact = Counter()
    est = defaultdict(lambda: [0, 0])
    stacks = defaultdict(set)
    folded_want = Counter()
    for j in js:
        if j.get("kind") == "alloc":
            exact[j.get("name")] += j["count"]
        elif j.get("kind") == "astack":
            t = j["type"].get("name")
            fr = [f.get("name") for f in j.get("frames", [])]
            m = fr[0] if fr else None
            e = est[(t, m)]
            e[0] += j["count"]
            e[1] += j["bytes"]
            stacks[(t, m)].add(tuple(fr[1:3]))
            folded_want[";".join(list(reversed(fr)) + [t])] += j["count"]

    want = {}
    for fact in facts["allocated"]:
        t, m, objs, each = fact.split(" ")
        want[(t, m)] = (int(objs), int(each))
    if route == "callback":
        ok(exact.get("Mdp.Work.Payload") == want[("Mdp.Work.Payload", "Mdp.Work.Payloads::Make")][0],
           "alloc records: every Payload counted exactly (%s, the program made %d)"
           % (exact.get("Mdp.Work.Payload"), want[("Mdp.Work.Payload", "Mdp.Work.Payloads::Make")][0]))
    # the sum of the known pairs' estimates against what they allocated
    total = sum(objs * each for objs, each in want.values())
    got = sum(est.get(k, (0, 0))[1] for k in want)
    tol = SD / math.sqrt(total / rate)
    ok(abs(got - total) <= tol * total,
       "astack bytes of the three (type, method) pairs: %d estimated, the program allocated %d "
       "(within %.1f%%)" % (got, total, 100 * tol))
    for (t, m), (objs, each) in sorted(want.items()):
        b = objs * each
        tol = SD / math.sqrt(b / rate)
        go, gb = est.get((t, m), (0, 0))
        ok(abs(go - objs) <= tol * objs and abs(gb - b) <= tol * b,
           "astack %s <- %s: %d objects, %d bytes estimated (the program: %d, %d; within %.1f%%)"
           % (t, m, go, gb, objs, b, 100 * tol))
        ok(stacks.get((t, m)) == {("Mdp.Work.AllocsWork::Stacks", "Mdp.Work.Program::Main")},
           "astack %s <- %s: called from AllocsWork::Stacks from Program::Main (%s)"
           % (t, m, sorted(stacks.get((t, m), ()))))
    a = est.get(("System.Byte[]", "Mdp.Work.AllocA::Make"), (0, 0))[1]
    bb = est.get(("System.Byte[]", "Mdp.Work.AllocB::Make"), (0, 0))[1]
    n = (a + bb) / rate
    share = a / (a + bb) if a + bb else 0
    sd = math.sqrt(0.75 * 0.25 / n) if n else 1
    ok(abs(share - 0.75) <= SD * sd, "AllocA.Make's share of System.Byte[] bytes: %.3f (3/4 within %.3f)"
       % (share, SD * sd))

    # --top --type: who allocates System.Byte[]
    status, out = batch(dirs, path, "--top", "5", "--type", "System.Byte[]")
    top = out.decode("utf-8")
    rows = [x.split("  ")[-1] for x in top.split("\n") if " <- " in x and x.strip()[:1].isdigit()]
    ok(status == 0 and rows[:2] == ["System.Byte[] <- Mdp.Work.AllocA::Make",
                                    "System.Byte[] <- Mdp.Work.AllocB::Make"] and
       all(r.startswith("System.Byte[] <- ") for r in rows),
       "--top 5 --type System.Byte[]: AllocA.Make, then AllocB.Make, no other type (%d: %s)"
       % (status, rows[:4]))
    # per thread: the main thread's #thread line (os=), --thread by it
    # keeps every astack record, a name no thread has keeps none
    os_name = None
    for line in open(path, encoding="utf-8"):
        p = line.rstrip("\n").split(" ")
        if p[0] == "#thread" and p[1] == main_tid:
            os_name = dict(x.split("=", 1) for x in p[2:] if "=" in x).get("os")
    s1, o1 = batch(dirs, path, "--top", "5", "--type", "System.Byte[]", "--thread", unquote(os_name or "?"))
    s2, o2 = batch(dirs, path, "--top", "5", "--type", "System.Byte[]", "--thread", "no-such-thread")
    rows1 = [x.split("  ")[-1] for x in o1.decode("utf-8").split("\n") if " <- " in x and x.strip()[:1].isdigit()]
    rows2 = [x for x in o2.decode("utf-8").split("\n") if " <- " in x and x.strip()[:1].isdigit()]
    ok(os_name and s1 == 0 and rows1[:2] == rows[:2] and not rows2,
       "#thread %s os=%s; --top --type System.Byte[] --thread %s: the same rows (%s), "
       "--thread no-such-thread: none (%d rows)" % (main_tid, os_name, os_name, rows1[:2], len(rows2)))
    # --folded: the astack records alone, root first, the type as the leaf
    status, out = batch(dirs, path, "--folded")
    got = Counter()
    for line in out.decode("utf-8").split("\n"):
        if line:
            s, _, c = line.rpartition(" ")
            got[s] += int(c)
    ok(status == 0 and got == folded_want,
       "--folded: the astack records' stacks root first, the type as the leaf, not the exact "
       "alloc records (%d stacks, %d expected)" % (len(got), len(folded_want)))
    # --pprof, read back by protobuf-c
    build = os.environ.get("MDT_BUILDDIR", "")
    reader = os.environ.get("MDT_PPROF_READ", os.path.join(build, "tests", "batch", "pprof_read"))
    with tempfile.TemporaryDirectory() as tmp:
        pb = os.path.join(tmp, "a.pb.gz")
        status, out = batch(dirs, path, "--pprof")
        with open(pb, "wb") as f:
            f.write(out)
        r = subprocess.run([reader, pb], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if ok(status == 0 and r.returncode == 0, "--pprof: a profile protobuf-c decodes (%d, %d)"
          % (status, r.returncode)):
        prof = json.loads(r.stdout.decode("utf-8"))
        types = [tuple(x) for x in prof["sample_type"]]
        ok(types == [("alloc_objects", "count"), ("alloc_space", "bytes")],
           "--pprof: sample types alloc_objects/count, alloc_space/bytes (%s)" % types)
        pgot = Counter()
        for smp in prof["samples"]:
            fr = [f["name"] for f in smp["frames"]]
            pgot[";".join(reversed(fr))] += smp["values"][0]
        ok(pgot == folded_want, "--pprof: the astack records' stacks and objects, leaf first, "
           "no exact alloc record (%d samples, %d expected)" % (len(pgot), len(folded_want)))
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check a log of `Workload heap` (data/profiler/Workload/Allocs.cs, issue
27) profiled with `--mode heap`: the program keeps N Retained objects alive
through three gen2 GCs, 400 ms apart, allocating garbage between them.

- the log: check.py's checks (heap records, #stats), `heap.walks=` at
  least 1 and at most the program's gen2 GCs, one snapshot (a GC number
  and a time) per walk, in increasing GC numbers and times;
- every snapshot counts the Retained objects exactly: N of them, N x 32
  bytes (a class of a long and a reference on 64-bit CoreCLR), and the one
  Retained[] array that holds them (exact: the walk sees every object);
- `batch --top 3`: the live heap after the last walked GC, Retained first
  with N x 32 bytes and no growth since the first snapshot;
- `batch --pprof` (protobuf-c's decoder): sample types inuse_objects and
  inuse_space, the last snapshot alone (N Retained objects, not N per
  snapshot).

    heap.py LOG EXPECTED --assemblies DIR...

Prints one line per check, then "N passed, M failed"."""
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from urllib.parse import unquote

import check
import mdtcheck  # tests/common, on the path check.py sets
from check import ok
from allocstacks import batch


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) != 2 or not dirs:
        print(__doc__)
        return 2
    path = argv[0]
    names, facts = check.read_expected(argv[1])
    tname, n = facts["retained"][0].split(" ")
    n = int(n)
    gen2 = int(facts["gen2"][0])
    log = check.Log(path)
    check.check_format(log, "heap")
    st = log.stats or {}
    walks = st.get("heap.walks", 0)
    ok(1 <= walks <= gen2, "stats: heap.walks=%s, 1 to the program's %d gen2 GCs" % (walks, gen2))
    snaps = sorted({(int(r.split(" ")[3]), int(r.split(" ")[4])) for k, r, *_ in log.items if k == "heap"})
    ok(len(snaps) == walks and all(a[0] < b[0] and a[1] <= b[1] for a, b in zip(snaps, snaps[1:])),
       "one snapshot per walk, GC numbers and times increasing (%s)" % snaps)
    fw = unquote(log.header.get("framework", ""))
    dirs = list(dirs) + ([fw] if fw and os.path.isdir(fw) else [])
    status, out = batch(dirs, path, "--json")
    js = [json.loads(x) for x in out.decode("utf-8").split("\n") if x]
    per = defaultdict(lambda: defaultdict(lambda: [0, 0]))
    for j in js:
        if j.get("kind") == "heap":
            c = per[j["gc"]][j.get("name")]
            c[0] += j["count"]
            c[1] += j["bytes"]
    for gc, (_, ms) in zip(sorted(per), snaps):
        got = per[gc]
        ok(got.get(tname) == [n, 32 * n] and got.get(tname + "[]", [0])[0] == 1,
           "GC %d: %s %s (the program kept %d, %d bytes), %s[] %s" % (
               gc, tname, got.get(tname), n, 32 * n, tname, got.get(tname + "[]")))
    status, out = batch(dirs, path, "--top", "3")
    top = out.decode("utf-8").split("\n")
    rows = [x for x in top if x.strip()[:1].isdigit()]
    ok(status == 0 and top[0].startswith("live heap after gen2 GC %d " % snaps[-1][0]) and rows and
       rows[0].split()[0] == str(32 * n) and rows[0].split()[-3:] == ["+0", "+0", tname],
       "--top 3: the live heap after GC %d, %s first with %d bytes and no growth (%r, %r)"
       % (snaps[-1][0], tname, 32 * n, top[0][:80], rows[:1]))
    build = os.environ.get("MDT_BUILDDIR", "")
    reader = os.environ.get("MDT_PPROF_READ", os.path.join(build, "tests", "batch", "pprof_read"))
    with tempfile.TemporaryDirectory() as tmp:
        pb = os.path.join(tmp, "h.pb.gz")
        status, out = batch(dirs, path, "--pprof")
        with open(pb, "wb") as f:
            f.write(out)
        r = subprocess.run([reader, pb], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if ok(status == 0 and r.returncode == 0, "--pprof: a profile protobuf-c decodes (%d, %d)"
          % (status, r.returncode)):
        prof = json.loads(r.stdout.decode("utf-8"))
        types = [tuple(x) for x in prof["sample_type"]]
        vals = [s["values"] for s in prof["samples"] if [f["name"] for f in s["frames"]] == [tname]]
        ok(types == [("inuse_objects", "count"), ("inuse_space", "bytes")] and vals == [[n, 32 * n]],
           "--pprof: inuse_objects/inuse_space, the last snapshot alone: %s %s (%s)" % (tname, vals, types))
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

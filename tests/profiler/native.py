#!/usr/bin/env python3
"""Check a log of a workload that spends its CPU time in native code
(data/profiler/Workload/Native.cs, the web server of data/profiler/Web):
the checks of every sample log (format, statistics, every frame of the
program named as the program names it, the log resolved offline by
mdinspect batch in four formats: check.py, offline.py), then where the
native time went:

- at least 95% of the native frames, and of the samples whose leaf is
  native, carry their ELF file (`native:NAME:BUILDID+0xOFF`), and every
  such file has its `#elf` line before the first record that uses it;
- the runtime's share (samples whose leaf is in libcoreclr.so or
  libclrjit.so) is split by activity, and mostly the workload's own:
  [gc] for gc, [jit] for jit, [exception] for exceptions;
- memmove: most samples are in libc's memmove, named by its symbol
  (`libc.so.6!__memmove_...`, from libc's debug file);
- quiet (--no-activities): no frame carries an activity.

    native.py MODE LOG EXPECTED --assemblies DIR...
    MODE: gc, jit, exceptions, memmove, quiet, web

Prints one line per check (and `info` lines with the shares), then
"N passed, M failed"."""
import os
import re
import sys
from collections import Counter

import check
import mdtcheck  # tests/common, on the path check.py sets
import offline
from check import ok

RUNTIME = ("libcoreclr.so", "libclrjit.so")
WANT = {"gc": "gc", "jit": "jit", "exceptions": "exception"}


def shares(mode, log, framed):
    natives = with_module = 0
    leaves = leaves_module = 0
    for kind, count, _, frames, _ in log.records:
        for i, f in enumerate(frames):
            m = check.NATIVE.match(f)
            if not m:
                continue
            natives += count
            with_module += count if m.group(1) else 0
            if i == 0:
                leaves += count
                leaves_module += count if m.group(1) else 0
    ok(natives > 0 and with_module >= 0.95 * natives,
       "native frames with their ELF file: %d of %d (%.1f%%, 95%% wanted)"
       % (with_module, natives, 100.0 * with_module / max(natives, 1)))
    ok(leaves > 0 and leaves_module >= 0.95 * leaves,
       "samples with a native leaf that carries its ELF file: %d of %d (%.1f%%, 95%% wanted)"
       % (leaves_module, leaves, 100.0 * leaves_module / max(leaves, 1)))
    s = log.stats or {}
    ok(s.get("native.module") == with_module,
       "stats: native.module=%s is the native frames with a file (%d)" % (s.get("native.module"), with_module))

    total = sum(c for c, _ in framed)
    runtime = Counter()
    libc = Counter()
    for count, fr in framed:
        _, leaf, _ = fr[0]
        if leaf.get("status") != "native":
            continue
        if leaf.get("module") in RUNTIME:
            runtime[leaf.get("activity", "none")] += count
        # libc's; under ASan (MDT_SANITIZED=1) the sanitizer's preloaded
        # runtime intercepts memmove
        if leaf.get("module") == "libc.so.6" or \
           (os.environ.get("MDT_SANITIZED") == "1" and leaf.get("module", "").startswith("libasan.so")):
            libc[leaf.get("symbol", "(no symbol)")] += count
    rt = sum(runtime.values())
    print("info %s: %d samples, %d (%.1f%%) with a native leaf in the runtime: %s" %
          (mode, total, rt, 100.0 * rt / max(total, 1),
           ", ".join("%s %.1f%%" % (a, 100.0 * n / rt) for a, n in runtime.most_common()) if rt else "-"))
    if libc:
        print("info %s: libc leaves: %s" % (mode, ", ".join("%s %d" % kv for kv in libc.most_common(5))))
    if mode in WANT:
        a = WANT[mode]
        ok(rt > 0 and runtime[a] > 0.5 * rt,
           "the runtime's share is mostly [%s]: %d of %d samples (%.1f%%)"
           % (a, runtime[a], rt, 100.0 * runtime[a] / max(rt, 1)))
    if mode == "memmove":
        mm = sum(n for sym, n in libc.items() if re.search(r"mem(move|cpy)", sym))  # (or the sanitizer's)
        ok(mm > 0.5 * total, "most samples are in libc's memmove, named by its symbol: %d of %d (%s)"
           % (mm, total, ", ".join(sym for sym in libc if re.search(r"mem(move|cpy)", sym))))
        named = sum(n for sym, n in libc.items() if sym != "(no symbol)")
        ok(named >= 0.95 * sum(libc.values()), "libc leaves named by a symbol: %d of %d"
           % (named, sum(libc.values())))
    if mode == "quiet":
        marked = sum(c for _, c, _, frames, _ in log.records for f in frames if "!" in f)
        acts = {k: v for k, v in s.items() if k.startswith("act.") and v}
        ok(marked == 0 and not acts, "no activity without activities (%d frames marked, %s)" % (marked, acts))
    if mode == "web":
        marked = Counter(a for a in runtime if a != "none")
        ok(rt == 0 or marked, "the runtime's share is split by activity (%s)" % dict(runtime))


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    if len(argv) != 3 or not dirs:
        print(__doc__)
        return 2
    mode, path, expected = argv
    log = check.Log(path)
    names, facts = check.read_expected(expected)
    check.check_format(log, "sample")
    mvids = set(facts["module"])
    ok(len(mvids) == 1, "the program printed its module's MVID")
    check.check_names(log, names, mvids, mode)
    framed = offline.resolve(ok, path, log, names, facts, mvids, dirs,
                             "Web.dll" if mode == "web" else "Workload.dll")
    if framed:
        shares(mode, log, framed)
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Check a log of `Workload throws` or `Workload contention`
(data/profiler/Workload/Events.cs, issue 27) written by mdprofile's
exceptions or contention mode.

throws (--mode exceptions):
- every `throw` record is well formed (count, thread, slice, the type's
  descriptor, frames with IL offsets), format 4, mode=exceptions;
- per (type, throwing method, its caller), the counts sum to exactly what
  the program threw: 300 InvalidOperationException from Thrower.Fail
  (called by RunA), 200 Oops<int> from Checker.Check<__Canon> (RunB);
  no other record has either type; #stats says throws= the records' sum;
- `mdinspect batch`: --top says "total N throws" with "excl. throws"
  columns and each type as an exclusive row with its count; --folded has
  "...;Thrower::Fail;System.InvalidOperationException 300" and the Oops
  one; --json gives each throw's type by name; --pprof read back by
  `go tool pprof -raw` (when go is installed) has the exceptions/count
  sample type and the two counts.

contention (--mode contention):
- `wait` records: count, nanoseconds, thread, slice, frames; every wait of
  the test's lock has EventsWork.Take called by EventsWork.Wait on its
  stack, on the waiter's thread (the TID the program read itself): the
  events come on the waiting thread; their count is the program's (20),
  their time within 10% (and 20 ms) of the waiter's own stopwatch;
- batch --top says "total N waits" with "wait ms" columns; --folded
  weighs by nanoseconds; --pprof has contentions/count and
  contention/nanoseconds.

Both: the log cut at every line end and in the middle of every line
(and after the last byte of each) makes batch say what is wrong where or
take what is whole: exit status 4 (the log has no #stats: cut), plus 1
when a line is malformed (1 alone for a header cut short), never a
signal or another status.

    events.py throws|contention LOG EXPECTED [--mode LIST] --assemblies DIR...

--mode: the log's modes (exceptions, contention by default): with
sample,exceptions the throws are checked as above, the stack records
are there, and batch is left to the run of exceptions alone.

Prints one line per check, then "N passed, M failed"."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from urllib.parse import unquote

import check
import mdtcheck  # tests/common, on the path check.py sets
import offline
from check import ok

DESC = r"(?:[0-9a-f]{32}:0x02[0-9a-f]{6}(?:<[^ ]*>)?|[A-Z0-9]+)"
THROW = re.compile(r"^throw ([1-9][0-9]*) ([1-9][0-9]*) ([0-9]+) (" + DESC + r") (.+)$")
WAIT = re.compile(r"^wait ([1-9][0-9]*) ([0-9]+) ([1-9][0-9]*) ([0-9]+) (.+)$")


def mdinspect():
    build = os.environ.get("MDT_BUILDDIR", "")
    return os.environ.get("MDT_MDINSPECT", os.path.join(build, "mdinspect", "mdinspect"))


def batch(dirs, data, *args):
    cmd = [mdinspect(), "batch", "--no-progress"] + [x for d in dirs for x in ("-a", d)] + list(args)
    r = subprocess.run(cmd, input=data, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def thread_lines(path):
    """TID -> the last #thread line's keys (name=, os=, managed=)."""
    lines = {}
    for line in open(path, encoding="utf-8"):
        if line.startswith("#thread "):
            parts = line.rstrip("\n").split(" ")
            lines[int(parts[1])] = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
    return lines


def threads_named(path, records, rx, tid_group):
    """Every TID of the records has a #thread line (the sampler is not
    running: the lines come from the threads the runtime reported and the
    events); returns them."""
    lines = thread_lines(path)
    tids = {int(rx.match(r).group(tid_group)) for r in records if rx.match(r)}
    ok(tids and tids <= set(lines),
       "#thread lines name every thread of the records without the sampler (%s; lines %s)"
       % (sorted(tids), sorted(lines)[:8]))
    return lines


def read_log(path):
    header, stats, records = {}, {}, []
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n").split("\t")[0]
        if line.startswith("#mdprofile "):
            parts = line.split(" ")
            header = dict(p.split("=", 1) for p in parts[2:] if "=" in p)
            header["format"] = parts[1]
        elif line.startswith("#stats "):
            stats = dict(p.split("=", 1) for p in line.split(" ")[1:] if "=" in p)
        elif line.startswith("throw ") or line.startswith("wait "):
            records.append(line)
    return header, stats, records


def bare(frames):
    return [offline.bare(f) for f in frames.split(" ")]


def check_throws(path, facts, dirs, data, mode):
    header, stats, records = read_log(path)
    ok(header.get("format") == "4" and header.get("mode") == mode,
       "header: format 4, mode=%s (%s, %s)" % (mode, header.get("format"), header.get("mode")))
    if mode != "exceptions":
        # sampled in the same run: the sample records are there too, and
        # the throws are counted once
        nstack = sum(1 for l in open(path, encoding="utf-8") if l.startswith("stack "))
        ok(nstack > 0 and int(stats.get("samples", "0")) > 0,
           "mode=%s: %d stack records besides the throws, samples=%s" % (mode, nstack, stats.get("samples")))
    want = {}
    for f in facts["throw"]:
        typ, thrower, caller, n = f.split(" ")
        want[(typ, thrower, caller)] = int(n)
    ok(len(want) == 2, "the program reports two throw sites (%d)" % len(want))
    got, total, bad = Counter(), 0, []
    types = Counter()
    for r in records:
        m = THROW.match(r)
        if not m:
            bad.append(r)
            continue
        count, frames = int(m.group(1)), bare(m.group(5))
        total += count
        types[m.group(4)] += count
        if len(frames) >= 2:
            got[(m.group(4), frames[0], frames[1])] += count
    ok(not bad, "every throw record is `throw COUNT TID SLICE TYPE FRAMES` (%s)" % bad[:2])
    for (typ, thrower, caller), n in sorted(want.items()):
        ok(got[(typ, thrower, caller)] == n and types[typ] == n,
           "%d throws of %s from %s called by %s (%d; of the type anywhere: %d)"
           % (n, typ, thrower, caller, got[(typ, thrower, caller)], types[typ]))
    ok(stats.get("throws") == str(total) and stats.get("end") == "exit",
       "#stats throws=%s is the records' sum %d, end=%s" % (stats.get("throws"), total, stats.get("end")))
    if mode != "exceptions":
        return  # batch on one kind of record: the run of exceptions alone
    # the program throws on its main thread (TID = pid): batch --thread by
    # the kernel's name its #thread line gives, and by a name no thread has
    lines = threads_named(path, records, THROW, 2)
    main = lines.get(int(header.get("pid", "0")), {})
    os_name = main.get("os")
    status, out, err = batch(dirs, data, "--top", "20", "--thread", unquote(os_name or "?"))
    status2, out2, _ = batch(dirs, data, "--top", "20", "--thread", "no-such-thread")
    ok(os_name and main.get("managed") == "1" and status == 0 and ("total %d throws" % total) in out and
       " in 0 records" in out2,
       "batch --top --thread %s (the main thread's #thread os=, managed=1): all %d throws; "
       "--thread no-such-thread: none (%d %s / %s)"
       % (os_name, total, status, err.strip()[:80], [l for l in out2.splitlines() if "total" in l][:1]))
    status, out, err = batch(dirs, data, "--top", "20")
    ok(status == 0 and ("total %d throws" % total) in out and "excl. throws" in out,
       "batch --top: total %d throws, columns in throws (%d %s)" % (total, status, err.strip()[:80]))
    rows = {l.split()[-1]: int(l.split()[0]) for l in out.splitlines()
            if re.match(r"^ +[0-9]+ +[0-9.]+% +[0-9]+ ", l)}
    ok(rows.get("System.InvalidOperationException") == 300 and rows.get("Mdp.Work.Oops<System.Int32>") == 200,
       "batch --top: the types are the exclusive rows, 300 and 200 (%s, %s)"
       % (rows.get("System.InvalidOperationException"), rows.get("Mdp.Work.Oops<System.Int32>")))
    status, out, _ = batch(dirs, data, "--folded")
    folded = Counter()
    for l in out.splitlines():
        stack, _, n = l.rpartition(" ")
        folded[";".join(stack.split(";")[-3:])] += int(n)
    a = folded["Mdp.Work.Thrower::RunA;Mdp.Work.Thrower::Fail;System.InvalidOperationException"]
    b = folded["Mdp.Work.Checker::RunB;Mdp.Work.Checker::Check<System.__Canon>;Mdp.Work.Oops<System.Int32>"]
    ok(status == 0 and a == 300 and b == 200,
       "batch --folded: RunA;Fail;System.InvalidOperationException 300 (%d), RunB;Check;Oops<Int32> 200 (%d)"
       % (a, b))
    status, out, _ = batch(dirs, data, "--json")
    named = Counter()
    for l in out.splitlines():
        o = json.loads(l)
        if o.get("kind") == "throw":
            named[(o["type"]["name"], o["frames"][0]["name"])] += o["count"]
    ok(named[("System.InvalidOperationException", "Mdp.Work.Thrower::Fail")] == 300 and
       named[("Mdp.Work.Oops<System.Int32>", "Mdp.Work.Checker::Check<System.__Canon>")] == 200,
       "batch --json: each throw's type and thrower by name (%s)" % dict(named))
    pprof(dirs, data, "exceptions/count", [total])


def pprof(dirs, data, stype, values):
    go = shutil.which("go")
    if not go:
        print("skip --pprof read back: go is not installed")
        return
    with tempfile.TemporaryDirectory() as d:
        pb = os.path.join(d, "p.pb.gz")
        cmd = [mdinspect(), "batch", "--no-progress", "--pprof"] + [x for dd in dirs for x in ("-a", dd)]
        with open(pb, "wb") as f:
            r = subprocess.run(cmd, input=data, stdout=f, stderr=subprocess.PIPE)
        raw = subprocess.run([go, "tool", "pprof", "-raw", pb], capture_output=True, text=True,
                             env=dict(os.environ, HOME=d, GOPATH=d, GOCACHE=os.path.join(d, "c")))
        text = raw.stdout
        samples = text.split("Samples:", 1)[-1].split("Locations", 1)[0]
        rows = [[int(v) for v in m.group(1).split()] for m in re.finditer(r"^ +([0-9 ]+):", samples, re.M)]
        sums = [sum(r[i] for r in rows if len(r) > i) for i in range(len(values))]
        ok(r.returncode == 0 and stype in text and sums == values,
           "batch --pprof read back by go tool pprof: %s, the samples' values sum to %s (%s)"
           % (stype, values, sums))


def check_contention(path, facts, dirs, data):
    header, stats, records = read_log(path)
    ok(header.get("format") == "4" and header.get("mode") == "contention",
       "header: format 4, mode=contention (%s, %s)" % (header.get("format"), header.get("mode")))
    take, wait, n, ms = facts["wait"][0].split(" ")
    n, ms = int(n), int(ms)
    waiter = int(facts["waiter"][0])
    bad, count, ns, elsewhere = [], 0, 0, Counter()
    for r in records:
        m = WAIT.match(r)
        if not m:
            bad.append(r)
            continue
        frames = bare(m.group(5))
        if any(frames[i] == take and frames[i + 1] == wait for i in range(len(frames) - 1)):
            if int(m.group(3)) == waiter:
                count += int(m.group(1))
                ns += int(m.group(2))
            else:
                elsewhere[int(m.group(3))] += int(m.group(1))
    ok(not bad, "every wait record is `wait COUNT NANOS TID SLICE FRAMES` (%s)" % bad[:2])
    ok(count == n and not elsewhere,
       "%d waits at EventsWork.Take called by EventsWork.Wait, on the waiter's thread %d (%d; on others: %s)"
       % (n, waiter, count, dict(elsewhere)))
    got = ns / 1e6
    ok(abs(got - ms) <= max(0.10 * ms, 20),
       "their time %.1f ms is the waiter's stopwatch %d ms within 10%% (20 ms at least)" % (got, ms))
    total = sum(int(WAIT.match(r).group(1)) for r in records if WAIT.match(r))
    ok(stats.get("waits") == str(total), "#stats waits=%s is the records' sum %d" % (stats.get("waits"), total))
    # the waiter is named "Waiter" (Thread.Name): its #thread line says so
    # without the sampler, and batch --thread Waiter keeps its waits
    lines = threads_named(path, records, WAIT, 3)
    mine = sum(int(WAIT.match(r).group(1)) for r in records
               if WAIT.match(r) and int(WAIT.match(r).group(3)) == waiter)
    status, out, err = batch(dirs, data, "--top", "20", "--thread", "Waiter")
    ok(unquote(lines.get(waiter, {}).get("name", "")) == "Waiter" and status == 0 and
       ("total %d waits" % mine) in out,
       "#thread %d name=Waiter; batch --top --thread Waiter: its %d waits (%s; %d %s)"
       % (waiter, mine, lines.get(waiter), status, [l for l in out.splitlines() if "total" in l][:1]))
    status, out, err = batch(dirs, data, "--top", "20")
    ok(status == 0 and ("total %d waits" % total) in out and "excl. wait ms" in out and "incl. waits" in out,
       "batch --top: total %d waits, columns in waits and wait ms (%d %s)" % (total, status, err.strip()[:80]))
    status, out, _ = batch(dirs, data, "--folded")
    weight = sum(int(l.rpartition(" ")[2]) for l in out.splitlines()
                 if "Mdp.Work.EventsWork::Wait;Mdp.Work.EventsWork::Take" in l)
    ok(status == 0 and weight == ns, "batch --folded weighs the waits by their nanoseconds (%d, %d)" % (weight, ns))
    pprof(dirs, data, "contention/nanoseconds", [total, sum(int(WAIT.match(r).group(2)) for r in records)])


def cut_anywhere(dirs, data):
    """batch on every prefix of the log that ends at a line end, in the
    middle of a line, or one byte into one: an answer or a located error,
    exit 4 or 5 (cut, and a malformed line) or 1, never a crash."""
    cuts = set()
    start = 0
    for i, c in enumerate(data):
        if c == 0x0A:
            cuts.update((i, i + 1, (start + i) // 2, start + 1))
            start = i + 1
    crashes, unlocated = [], []
    for k in sorted(c for c in cuts if 0 < c < len(data)):
        # 1: a line did not resolve or was malformed (a header cut short
        # is no log yet); 4: no #stats (cut)
        status, out, err = batch(dirs, data[:k], "--top", "5")
        if status not in (1, 4, 5):
            crashes.append((k, status))
        status, out, err = batch(dirs, data[:k])
        if status not in (1, 4, 5):
            crashes.append((k, status))
        elif "[malformed line" in out and not re.search(r"\[malformed line [0-9]+: ", out):
            unlocated.append(k)
    ok(not crashes and not unlocated,
       "the log cut at %d places: batch answers or says which line is wrong (crashes %s, unlocated %s)"
       % (len(cuts), crashes[:3], unlocated[:3]))


def main():
    argv = sys.argv[1:]
    dirs = []
    if "--assemblies" in argv:
        k = argv.index("--assemblies")
        argv, dirs = argv[:k], argv[k + 1:]
    mode = None
    if "--mode" in argv:
        k = argv.index("--mode")
        mode = argv[k + 1]
        argv = argv[:k] + argv[k + 2:]
    if len(argv) != 3 or argv[0] not in ("throws", "contention") or not dirs:
        print(__doc__)
        return 2
    what, path, expected = argv
    _, facts = check.read_expected(expected)
    header, _, _ = read_log(path)
    fw = offline.framework_dir(header.get("runtime", ""))
    ok(fw is not None, "the log's runtime %s is installed (%s)" % (header.get("runtime"), fw))
    dirs = dirs + ([fw] if fw else [])
    data = open(path, "rb").read()
    if what == "throws":
        check_throws(path, facts, dirs, data, mode or "exceptions")
    else:
        check_contention(path, facts, dirs, data)
    if not mode:
        cut_anywhere(dirs, data)
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main())

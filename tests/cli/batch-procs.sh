#!/bin/sh
# mdinspect batch on the logs of several processes concatenated (issue 24:
# `cat app*.log | mdinspect batch`), made here with absolute paths to the
# fixtures: process 100 (cmd=, frameworks= naming data/pdb and a folder
# that does not exist, a #module line, a [truncated] stack, enough records
# to fill several input blocks), process 200 (framework= naming data/),
# process 300 (cut short: no #stats), and a log cut inside a line with
# process 400's header appended to it. Checks:
#  - a header's folders are searched without -a, by the lines after it
#    only: Everything's frames do not resolve in process 100, do in 200,
#    with 1 thread and with 4 (the same bytes); --no-log-folders turns
#    the search off;
#  - --json: every object of a line of a process has its "pid";
#  - --speedscope: one profile per process, named "pid 100: dotnet app.dll",
#    each with its own stacks and weights adding up to its endValue;
#  - --top and --folded: every process by default, one with --pid;
#  - the log without #stats is warned about once, the exit status has 4;
#  - a frame of a module not found that a #module line named, after that
#    line: "[unresolved: unknown MVID (System.Linq 10.0.0.0)]", and in JSON
#    "unknown_mvid", "unknown_assembly", "unknown_assembly_version"; before
#    the #module line: "[unresolved: unknown MVID]";
#  - the special frame `truncated` prints [truncated] in every format;
#  - a later `#frameworks` line's folders are searched, and so are the
#    application's folders of the header's `folders=` and of a later
#    `#folders` line (relative and missing folders ignored);
#  - the line where a log was cut and the next appended is malformed, and
#    the lines after it are the next process's.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-procs.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-procs.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-procs.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99
LC_ALL=C
export LC_ALL

python3 - "$prog" "$tmp" "$top" <<'PY'
import json, subprocess, sys
prog, tmp, top = sys.argv[1:4]
from mdtcheck import check, done

LINES = "c8e53984472d48f98a0624ad8d869103"   # data/pdb/Lines.dll
EVERY = "fe9721ae846a4bae8601a052e4c43e45"   # data/Everything.dll
LINQ = "11111111111111111111111111111111"    # nowhere: named by #module
GONE = "22222222222222222222222222222222"    # nowhere, never named
pad = "stack 1 %s:0x06000002@0x8 %s:0x06000003@0x5 native\n" % (LINES, LINES)
log = (
    "#mdprofile 1 runtime=10.0.12 pid=100 mode=sample rate=1000 cmd=dotnet%%20app.dll "
    "frameworks=%s/data/pdb,/nonexistent/shared/Microsoft.NETCore.App/10.0.12\n" % top +
    "stack 2 %s:0x06000001 native\n" % LINQ +
    "#module %s System.Linq 10.0.0.0\n" % LINQ +
    "stack 3 %s:0x06000001 %s:0x06000002 truncated\n" % (LINQ, LINES) +
    "stack 4 %s:0x06000001 %s:0x06000002\n" % (EVERY, LINES) +
    pad * 3000 +
    "#stats samples=3009\n"
    "#mdprofile 1 runtime=10.0.12 pid=200 mode=sample rate=1000 framework=%s/data\n" % top +
    "stack 5 %s:0x06000001 %s:0x06000002\n" % (EVERY, LINES) +
    "stack 6 %s:0x06000001 %s:0x06000002\n" % (GONE, LINES) +
    "#stats samples=11\n"
    "#mdprofile 1 runtime=10.0.12 pid=300 mode=sample rate=1000\n"
    "stack 7 %s:0x06000002 native\n" % LINES +
    "stack 8 %s:0x06000002 %s:0x060" % (LINES, LINES) +
    "#mdprofile 1 runtime=10.0.12 pid=400 mode=sample rate=1000\n"
    "stack 9 %s:0x06000003 native\n" % LINES +
    "#stats samples=9\n")
open(tmp + "/all.log", "w").write(log)
nlines = log.count("\n")

def run(*args):
    p = subprocess.run([prog, "batch", "--no-progress"] + list(args),
                       stdin=open(tmp + "/all.log"), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    return p.returncode, p.stdout.decode(), p.stderr.decode()

st1, out1, err1 = run("-t", "1")
st4, out4, err4 = run("-t", "4")
text = out1.split("\n")
check((st1, out1, err1) == (st4, out4, err4) and len(text) == nlines + 1,
      "1 thread and 4 write the same bytes (%d lines), exit status %d" % (len(text) - 1, st1))
check(text[4] == "stack 4\t[unresolved: unknown MVID]\tLines.Calc::Loop (/_/src/pdb/Lines.cs:20)",
      "process 100: Everything's frame does not resolve (its folder is named later): %r"
      % text[4])
p200 = text.index(next(l for l in text if l.startswith("#mdprofile 1 runtime=10.0.12 pid=200")))
check(text[p200 + 1] == "stack 5\tEverything.InfoAttribute::.ctor\tLines.Calc::Loop (/_/src/pdb/Lines.cs:20)",
      "process 200: Everything's frame resolves from its header's framework= folder: %r"
      % text[p200 + 1])
check(text[3] == "stack 3\t[unresolved: unknown MVID (System.Linq 10.0.0.0)]\tLines.Calc::Loop (/_/src/pdb/Lines.cs:20)"
      "\t[truncated]", "after its #module line, a module not found is named: %r" % text[3])
check(text[1] == "stack 2\t[unresolved: unknown MVID]\t[native]",
      "before its #module line, it is not: %r" % text[1])
check(text[p200 + 2] == "stack 6\t[unresolved: unknown MVID]\tLines.Calc::Loop (/_/src/pdb/Lines.cs:20)",
      "a module no #module line named: %r" % text[p200 + 2])
cutline = next((i for i, l in enumerate(text) if "another log's header" in l), None)
check(cutline is not None and text[cutline].startswith("[malformed line %d: cut short" % (cutline + 1))
      and text[cutline + 1] == "stack 9\tLines.Calc::TwoFiles (/_/src/pdb/Lines.cs:30)\t[native]",
      "a log cut inside a line and the next appended: %r"
      % (text[cutline] if cutline is not None else None))
check(err1.count("has no #stats line") == 1 and "process 300 " in err1 and st1 == 5,
      "one warning about process 300's missing #stats, exit status 5: %r"
      % [l for l in err1.split("\n") if "stats" in l])

st, out, err = run("--no-log-folders", "-a", "data/pdb")
check("stack 5\t[unresolved: unknown MVID]\tLines.Calc::Loop (/_/src/pdb/Lines.cs:20)" in out.split("\n"),
      "--no-log-folders: the header's folder is not searched")

st, out, err = run("--json")
objs = [json.loads(l) for l in out.split("\n") if l]
want = []
pid = None
for l in log.split("\n")[:-1]:
    if "#mdprofile" in l:
        newpid = int(l.split("pid=")[1].split()[0])
        if l.startswith("#mdprofile"):
            pid = newpid
            want.append(None)  # the header: its own keys hold it
            continue
        want.append(pid)  # the cut line: the process before
        pid = newpid
        continue
    want.append(pid)
got = [o.get("pid") if o["kind"] != "header" else None for o in objs]
check(got == want, "--json: every object has its process's pid (%d objects)" % len(objs))
s3 = objs[3]
f0 = s3["frames"][0]
check(f0.get("unknown_mvid") == LINQ and f0.get("unknown_assembly") == "System.Linq" and
      f0.get("unknown_assembly_version") == "10.0.0.0" and
      s3["frames"][2] == {"status": "truncated"},
      "--json: the module not found and the truncated frame: %r" % s3["frames"])
check(objs[2] == {"kind": "module", "pid": 100, "mvid": LINQ, "name": "System.Linq",
                  "version": "10.0.0.0"}, "--json: the #module line: %r" % objs[2])

st, out, err = run("--speedscope")
sp = json.loads(out)
names = [p["name"] for p in sp["profiles"]]
ok = names == ["pid 100: dotnet app.dll", "pid 200", "pid 300", "pid 400"]
for p in sp["profiles"]:
    ok = ok and len(p["samples"]) == len(p["weights"]) and sum(p["weights"]) == p["endValue"]
frames = [f["name"] for f in sp["shared"]["frames"]]
check(ok and sp["profiles"][0]["endValue"] == 3009 and sp["profiles"][3]["endValue"] == 9 and
      "[truncated]" in frames,
      "--speedscope: one profile per process %r, weights add up" % names)

st, out, err = run("--top", "5")
total_all = out.split("\n")[0]
st, out, err = run("--top", "5", "--pid", "200")
check(total_all == "total 3036 samples in 3007 records, 7 distinct methods" and
      out.split("\n")[0] == "total 11 samples in 2 records, 3 distinct methods",
      "--top: every process (%r), one with --pid 200 (%r)" % (total_all, out.split("\n")[0]))
st, out, err = run("--folded", "--pid", "300")
check(out == "[native];Lines.Calc::Loop 7\n" and "process 300" in err,
      "--folded --pid 300: its records alone: %r" % out)
st, out, err = run("--folded")
check("[truncated];Lines.Calc::Loop;[unresolved: unknown MVID (System.Linq 10.0.0.0)] 3"
      in out.split("\n"), "--folded: [truncated] at the root")

# A folder first seen after the header comes in a #frameworks line: the
# lines after it search it (as for a header, from the input block that
# holds it on: the lines before it in that block may see it too).
late = ("#mdprofile 3 runtime=10.0.12 pid=500 mode=sample rate=1000\n"
        "stack 1 %s:0x06000001\n" % EVERY +
        "#frameworks /nonexistent/x,%s/data\n" % top +
        "stack 2 %s:0x06000001\n" % EVERY +
        "#stats samples=3\n")
p = subprocess.run([prog, "batch", "--no-progress"], input=late.encode(),
                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
text = p.stdout.decode().split("\n")
check(text[3] == "stack 2\tEverything.InfoAttribute::.ctor",
      "a #frameworks line: its folders are searched: %r" % text[1:4])

# The application's folders: the header's folders= (the relative "data",
# which would find Everything.dll from here, and a missing one are
# ignored), and, in another input, a #folders line, searched by the lines
# after it (as for #frameworks, the lines before it in its block may see
# it too).
head = ("#mdprofile 4 runtime=10.0.12 pid=600 mode=sample rate=1000 "
        "folders=data,/nonexistent/bin,%s/data/pdb\n" % top +
        "stack 1 %s:0x06000002@0x8\n" % LINES +
        "stack 1 %s:0x06000001\n" % EVERY +
        "#stats samples=2\n")
line = ("#mdprofile 4 runtime=10.0.12 pid=601 mode=sample rate=1000\n"
        "#folders %s/data\n" % top +
        "stack 2 %s:0x06000001\n" % EVERY +
        "#stats samples=2\n")
for t in (1, 2):
    for log, at, want, what in (
            (head, 1, "stack 1\tLines.Calc::", "folders= (absolute, existing folders only)"),
            (head, 2, "stack 1\t[unresolved: unknown MVID]", "folders=: not a relative one"),
            (line, 2, "stack 2\tEverything.InfoAttribute::.ctor", "a #folders line")):
        for opt in ((), ("--no-log-folders",)):
            p = subprocess.run([prog, "batch", "--no-progress", "-t", str(t)] + list(opt),
                               input=log.encode(), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, timeout=120)
            got = p.stdout.decode().split("\n")[at]
            exp = want if not opt else got.split("\t")[0] + "\t[unresolved: unknown MVID]"
            check(got.startswith(exp), "-t %d%s: %s: %r" % (t, "".join(" " + o for o in opt),
                                                            what if not opt else "not searched", got))

done()
PY

#!/bin/sh
# mdinspect batch on profiler logs cut at every byte offset (a process
# killed while writing its log, a copy interrupted): the logs of
# tests/cli/inputs (batch-log, batch-calls, batch-alloc, batch-astack: an
# alloc log with sampled stacks and a heap log) and all four
# concatenated (several processes), each cut after 0, 1, 2, ... bytes (the
# concatenation every third byte). For every cut:
#  - no crash: the exit status is one mdinspect(1) documents (0, 1, 4, 5);
#  - one output line per input line, and every complete line of the cut
#    input prints exactly what it prints in the uncut run;
#  - a cut inside a line prints `[malformed line N: cut short: ...]` for it
#    (text), or a "malformed" object saying so (--json, every 7th cut);
#  - each log left without its #stats line is warned about on standard
#    error, once, and the exit status has 4 added.
# Prints one line per log and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-cut.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-cut.sh: python3 is needed" >&2; exit 77; }
# Thousands of runs: the program itself, not libtool's wrapper script.
if [ -z "${MDINSPECT:-}" ] && [ -x "$build/mdinspect/.libs/mdinspect" ]; then
    prog=$build/mdinspect/.libs/mdinspect
    LD_LIBRARY_PATH=$build/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-cut.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99
LC_ALL=C
export LC_ALL

python3 - "$prog" "$tmp" <<'PY'
import json, subprocess, sys
prog, tmp = sys.argv[1:3]
index = tmp + "/index"
args = [prog, "batch", "-a", "data", "-a", "data/pdb", "--index", index, "--no-progress"]
DOCUMENTED = {0, 1, 4, 5}
from mdtcheck import check, done

def run(data, extra=()):
    p = subprocess.run(args + list(extra), input=data, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")

logs = {}
for name in ("batch-log", "batch-calls", "batch-alloc", "batch-astack"):
    logs[name] = open("tests/cli/inputs/%s.txt" % name, "rb").read()
logs["concatenated"] = b"".join(logs[n] for n in ("batch-log", "batch-calls", "batch-alloc",
                                                 "batch-astack"))

for name, log in logs.items():
    problems = []
    status, out, err = run(log)
    ref = out.split("\n")
    if ref[-1] == "":
        ref.pop()
    nlines = log.count(b"\n")
    if status not in DOCUMENTED or len(ref) != nlines:
        problems.append("uncut: status %d, %d output lines for %d" % (status, len(ref), nlines))
    step = 3 if name == "concatenated" else 1  # its parts are cut at every byte
    for k in range(0, len(log) + 1, step):
        cut = log[:k]
        status, out, err = run(cut)
        got = out.split("\n")
        if got[-1] == "":
            got.pop()
        whole = cut.count(b"\n")
        partial = not cut.endswith(b"\n") and len(cut) > 0
        want = whole + (1 if partial else 0)
        where = "cut at %d" % k
        if status not in DOCUMENTED:
            problems.append("%s: exit status %d (%s)" % (where, status, err.strip()[-200:]))
            continue
        if len(got) != want:
            problems.append("%s: %d output lines, want %d" % (where, len(got), want))
            continue
        if got[:whole] != ref[:whole]:
            i = next(i for i in range(whole) if got[i] != ref[i])
            problems.append("%s: line %d %r, uncut %r" % (where, i + 1, got[i], ref[i]))
        if partial:
            expect = "[malformed line %d: cut short" % want
            if not got[-1].startswith(expect):
                problems.append("%s: last line %r, want %r..." % (where, got[-1], expect))
            if not status & 1:
                problems.append("%s: exit status %d, bit 1 not set" % (where, status))
        # processes (complete header lines) without a complete #stats line
        open_logs = 0
        for l in cut.split(b"\n")[:whole]:
            if l.startswith(b"#mdprofile"):
                open_logs += 1
            elif l.startswith(b"#stats") and open_logs:
                open_logs -= 1  # each log here has its header, then its #stats
        warned = err.count("has no #stats line")
        if warned != open_logs or bool(status & 4) != (open_logs > 0):
            problems.append("%s: %d warnings about a missing #stats, exit status %d; want %d"
                            % (where, warned, status, open_logs))
        if k % 7 == 0 and partial:
            status, out, err = run(cut, ["--json"])
            objs = [json.loads(l) for l in out.split("\n") if l]
            last = objs[-1] if objs else {}
            if len(objs) != want or last.get("kind") != "malformed" or \
               "cut short" not in last.get("error", ""):
                problems.append("%s --json: %d objects, last %r" % (where, len(objs), last))
    for p in problems[:10]:
        print("  " + p)
    ok = not problems
    check(ok, "%s: %d cuts (%d problems)" % (name, len(range(0, len(log) + 1, step)),
                                             len(problems)))
done()
PY

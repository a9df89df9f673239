#!/bin/sh
# mdinspect batch keeps its caches within --cache-mb, for all threads
# together (issue 25): a hostile log of 200,000 stacks, each of two frames
# of distinct junk MVIDs (a frame cache entry per frame, nothing ever met
# again), stays under the bound plus a fixed allowance in peak RSS with
# --cache-mb 16 (1 and 2 threads), and goes well over it with --cache-mb
# 512 (so the bound is what holds it). The results do not depend on the
# bound: text and JSON output of the batch-*.txt inputs repeated (and, when
# Mono's framework and bench/batch/gen are there, 30,000 PATH, MVID and
# stack lines over it) are the same bytes with --cache-mb 1 as with the
# default, with 1 thread and with 3. Peak RSS is measured of the program
# itself (not libtool's wrapper) by getrusage of a child; under a
# sanitizer (MDT_SANITIZED set) only the results are compared.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-memory.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-memory.sh: python3 is needed" >&2; exit 77; }
if [ -z "${MDINSPECT:-}" ] && [ -x "$build/mdinspect/.libs/mdinspect" ]; then
    prog=$build/mdinspect/.libs/mdinspect
    LD_LIBRARY_PATH=$build/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
gen=$build/bench/batch/gen
[ -x "$build/bench/batch/.libs/gen" ] && gen=$build/bench/batch/.libs/gen
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-mem.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

if [ -x "$gen" ] && [ -f /usr/lib/mono/4.5/mscorlib.dll ]; then
    files=$(ls /usr/lib/mono/4.5/*.dll | head -n 40)
    { "$gen" path 10000 $files; "$gen" mvid 10000 $files; "$gen" stacks 500 20 $files; } \
        >"$tmp/mono.txt" 2>/dev/null || : >"$tmp/mono.txt"
else
    : >"$tmp/mono.txt"
fi

echo "batch-memory.sh: $(wc -l <"$tmp/mono.txt") lines over Mono 4.5"
python3 - "$prog" "$tmp" <<'PY'
import os, random, subprocess, sys
prog, tmp = sys.argv[1:3]
from mdtcheck import check, done
sanitized = bool(os.environ.get("MDT_SANITIZED"))

def run_rss(args, infile):
    """(status, stdout, peak RSS in MiB) of one run, measured by a child Python"""
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.run(sys.argv[1:], stdin=open(%r), stdout=subprocess.PIPE, "
              "stderr=subprocess.DEVNULL)\n"
              "sys.stdout.buffer.write(p.stdout)\n"
              "sys.stderr.write('%%d %%d' %% (p.returncode, resource.getrusage("
              "resource.RUSAGE_CHILDREN).ru_maxrss))\n" % infile)
    p = subprocess.run([sys.executable, "-c", script, prog, "batch", "--no-progress"] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    st, rss = p.stderr.decode().split()[-2:]
    return int(st), p.stdout, int(rss) / 1024.0

# the hostile log
r = random.Random(25)
junk = tmp + "/junk.log"
with open(junk, "w") as f:
    f.write("#mdprofile 1 pid=1 mode=sample\n")
    for i in range(200000):
        f.write("stack 1 %032x:0x06000001 %032x:0x06000002{I4}\n"
                % (r.getrandbits(128), r.getrandbits(128)))
    f.write("#stats\n")
ALLOWANCE = 24  # MiB: the program, libraries, input blocks, output buffers
if sanitized:
    print("SKIP peak RSS under a sanitizer (its shadow memory is not the program's)")
else:
    for threads in ("1", "2"):
        st, out, rss = run_rss(["--cache-mb", "16", "-t", threads], junk)
        check(st == 1 and out.count(b"\n") == 200002 and rss < 16 + ALLOWANCE,
              "hostile log, --cache-mb 16, %s thread(s): peak RSS %.1f MiB (bound + %d)"
              % (threads, rss, ALLOWANCE))
    st, out, rss = run_rss(["--cache-mb", "512", "-t", "1"], junk)
    check(rss > 2 * (16 + ALLOWANCE),
          "hostile log, --cache-mb 512: peak RSS %.1f MiB (what the bound saves)" % rss)

# the same results whatever the bound
inputs = tmp + "/inputs.txt"
with open(inputs, "wb") as f:
    for i in range(40):
        for n in ("batch-log", "batch-plain", "batch-calls", "batch-alloc", "batch-malformed"):
            f.write(open("tests/cli/inputs/%s.txt" % n, "rb").read())
    f.write(open(tmp + "/mono.txt", "rb").read())
base = ["-a", "data", "-a", "data/pdb", "-a", "/usr/lib/mono/4.5"]
for fmt in ([], ["--json"], ["--top", "20"]):
    outs = {}
    for name, extra in (("default", ["-t", "1"]), ("1 MiB, 1 thread", ["--cache-mb", "1", "-t", "1"]),
                        ("1 MiB, 3 threads", ["--cache-mb", "1", "-t", "3"])):
        p = subprocess.run([prog, "batch", "--no-progress"] + base + fmt + extra,
                           stdin=open(inputs), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=600)
        outs[name] = (p.returncode, p.stdout, p.stderr)
    same = len(set(outs.values())) == 1
    check(same and outs["default"][1], "%s: the same output with --cache-mb 1 (1 and 3 threads) "
          "as with the default (%d lines)" % (" ".join(fmt) or "text",
                                              outs["default"][1].count(b"\n")))
done()
PY

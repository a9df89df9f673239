#!/bin/sh
# mdinspect batch --pprof read by pprof itself (`go tool pprof`, Go from
# Debian's golang-go), on logs of each mode (tests/cli/inputs/batch-calls.txt,
# batch-alloc.txt, the stack records of batch-log.txt, two processes with
# native frames):
#  - `go tool pprof -raw` reads the file (status 0) and lists every
#    function protobuf-c's decoder finds in it (tests/batch/pprof_read);
#  - `go tool pprof -top` (every node, the mode's count) gives each method
#    the exclusive and inclusive counts `batch --top` gives it, and the same
#    total.
# Exits 77 when Go is not installed. Prints one line per check and
# "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
reader=$build/tests/batch/pprof_read
[ -x "$prog" ] || { echo "batch-pprof-go.sh: $prog is not built" >&2; exit 99; }
[ -x "$reader" ] || { echo "batch-pprof-go.sh: $reader is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-pprof-go.sh: python3 is needed" >&2; exit 77; }
command -v go >/dev/null 2>&1 || { echo "batch-pprof-go.sh: Go is not installed (golang-go): go tool pprof is what this test reads --pprof with" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-pprof-go.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99
# pprof keeps nothing of a local file, but Go wants a home and a cache
HOME=$tmp GOCACHE=$tmp/gocache PPROF_TMPDIR=$tmp
export HOME GOCACHE PPROF_TMPDIR
go tool pprof -h >/dev/null 2>&1 || { echo "batch-pprof-go.sh: go tool pprof does not run" >&2; exit 77; }

M=c8e53984472d48f98a0624ad8d869103
E=79f08d46c6d14089b1fd9c3ac69e7990
{ head -1 tests/cli/inputs/batch-log.txt; grep '^stack' tests/cli/inputs/batch-log.txt; } >"$tmp/stacks.txt"
cat >"$tmp/two.txt" <<EOF
#mdprofile 3 runtime=10.0.12 pid=101 mode=sample rate=1000 start=2026-11-25T14:21:07Z clock=cpu
stack 7 $M:0x06000002@0x8 $M:0x06000003@0x5 native:libt.so:00ff00ff+0x1a2b
stack 2 native:libc.so.6:abcdef01+0x10!gc native:libt.so:00ff00ff+0x1a2b $M:0x06000003@0x9
stack 3 $M:0x06000002@0x8 $M:0x06000002@0x19 $M:0x06000003@0x9
#stats samples=12 duration_ms=1500
#mdprofile 3 runtime=10.0.12 pid=202 mode=sample rate=250 start=2026-11-25T14:21:08Z clock=cpu
stack 4 $E:0x06000001@0x0 native!jit
stack 5 $M:0x06000002@0x8 $M:0x06000003@0x5 native:libt.so:00ff00ff+0x1a2b
#stats samples=9 duration_ms=3000
EOF

n=0
for spec in "tests/cli/inputs/batch-calls.txt calls" "tests/cli/inputs/batch-alloc.txt alloc_objects" \
            "$tmp/stacks.txt samples" "$tmp/two.txt samples"; do
    set -- $spec
    n=$((n + 1))
    b=$tmp/in$n
    "$prog" batch --no-progress -a data -a data/pdb --pprof <"$1" >"$b.pb.gz" 2>/dev/null
    "$prog" batch --no-progress -a data -a data/pdb --top 100000 <"$1" >"$b.top" 2>/dev/null
    "$reader" "$b.pb.gz" >"$b.json"
    go tool pprof -raw "$b.pb.gz" >"$b.raw" 2>"$b.raw.err"
    echo $? >"$b.raw.rc"
    go tool pprof -top -nodecount=1000000 -nodefraction=0 -edgefraction=0 -sample_index="$2" \
        "$b.pb.gz" >"$b.gotop" 2>"$b.gotop.err"
    echo $? >"$b.gotop.rc"
    echo "$1 $2" >"$b.what"
done

python3 - "$tmp" "$n" <<'PY'
import json, re, sys
tmp, n = sys.argv[1], int(sys.argv[2])
from mdtcheck import check, done
def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()

BATCH = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+(\d+)\s+[\d.]+%  (.*)$")
GO = re.compile(r"^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+(\d+)\s+[\d.]+%\s+(.*)$")
for i in range(1, n + 1):
    b = "%s/in%d" % (tmp, i)
    what = read(b + ".what").strip().split(" ")
    label = "%s (%s)" % (what[0].rsplit("/", 1)[-1], what[1])
    prof = json.loads(read(b + ".json"))
    names = {f["name"] for s in prof["samples"] for f in s["frames"]}
    raw = read(b + ".raw")
    missing = [x for x in names if x not in raw]
    check(read(b + ".raw.rc").strip() == "0" and "Samples:" in raw and not missing,
          "%s: go tool pprof -raw reads it and lists all %d functions%s"
          % (label, len(names), (": not %r (%s)" % (missing[:3], read(b + ".raw.err").strip()[:200]))
             if missing else ""))
    want = {}
    section = None
    for line in read(b + ".top").split("\n"):
        # sample and calls logs: a table by exclusive counts (exclusive,
        # inclusive); alloc logs: a table by objects (objects, bytes), where
        # a type, the leaf, has its objects as both
        if line.startswith("by exclusive") or line.startswith("by objects"):
            section = line.split()[1]
        elif line.startswith("by inclusive") or line.startswith("by bytes"):
            break
        m = BATCH.match(line) if section else None
        if m:
            excl = int(m.group(1))
            want[m.group(3)] = (excl, excl if section == "objects" else int(m.group(2)))
    got = {}
    for line in read(b + ".gotop").split("\n"):
        m = GO.match(line)
        if m:
            got[m.group(3)] = (int(m.group(1)), int(m.group(2)))
    total = re.search(r"of (\d+) total", read(b + ".gotop"))
    btotal = re.search(r"total (?:count )?(\d+)", read(b + ".top"))
    check(read(b + ".gotop.rc").strip() == "0" and got == want and want and total and btotal and
          total.group(1) == btotal.group(1),
          "%s: go tool pprof -top gives every method batch --top's exclusive and inclusive "
          "counts (%d methods, total %s)%s"
          % (label, len(want), total.group(1) if total else "?",
             "" if got == want else ": %r" % sorted(set(got.items()) ^ set(want.items()))[:4]))
done()
PY

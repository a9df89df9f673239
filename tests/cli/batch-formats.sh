#!/bin/sh
# mdinspect batch: the machine formats hold what they claim, on the log
# and plain-line inputs of tests/cli/inputs/ (batch-*.txt):
#  - every --json line parses, one per input line, and its frames are the
#    text output's frames (same count, same names, leaf first); every
#    resolved frame that names a type or member, and no other frame, has a
#    "metadata_name";
#  - every --folded line is its record's stack, root first, with its count;
#  - the --speedscope file has the fields speedscope's file format requires
#    ($schema, shared.frames[].name, profiles[] of type "sampled" with name,
#    unit, startValue, endValue, samples and weights of equal length, frame
#    indices in range) and its weights add up to endValue;
#  - a warm --index run reads no file, a changed file is read again.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-formats.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-formats.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-batch.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

for in in batch-log batch-plain; do
    f=tests/cli/inputs/$in.txt
    "$prog" batch -a data -a data/pdb <"$f" >"$tmp/$in.txt" 2>/dev/null
    "$prog" batch --json -a data -a data/pdb <"$f" >"$tmp/$in.json" 2>/dev/null
    "$prog" batch --folded -a data -a data/pdb <"$f" >"$tmp/$in.folded" 2>/dev/null
    "$prog" batch --speedscope -a data -a data/pdb <"$f" >"$tmp/$in.speedscope" 2>/dev/null
done

python3 - "$tmp" >"$tmp/formats.check" <<'PY'
import json, sys
tmp = sys.argv[1]
from mdtcheck import check, part

# TypeDef TypeRef TypeSpec MethodDef Field MemberRef MethodSpec Property Event ExportedType
TYPE_OR_MEMBER = {0x02, 0x01, 0x1b, 0x06, 0x04, 0x0a, 0x2b, 0x17, 0x14, 0x27}

def frame_text(f):
    st = f["status"]
    if st == "ok":
        return f["name"] + (" (%s:%d)" % (f["file"], f["line"]) if "file" in f else "")
    if st in ("native", "unmanaged", "dynamic", "stub"):
        return "[%s]" % st
    if st == "unknown":
        return "[unknown:%s]" % f["reason"]
    return "[unresolved: %s]" % st

def folded_name(f):
    t = frame_text(f)
    return (f["name"] if f["status"] == "ok" else t).replace(";", ":")

for name in ("batch-log", "batch-plain"):
    text = open("%s/%s.txt" % (tmp, name)).read().split("\n")[:-1]
    lines = open("%s/%s.json" % (tmp, name)).read().split("\n")[:-1]
    objs = []
    try:
        objs = [json.loads(l) for l in lines]
        check(True, "%s: every --json line parses (%d)" % (name, len(objs)))
    except ValueError as e:
        check(False, "%s: every --json line parses: %s" % (name, e))
    check(len(objs) == len(text), "%s: one JSON object per input line" % name)
    same = True
    folded_want = []
    for o, t in zip(objs, text):
        k = o["kind"]
        if k in ("stack", "call", "alloc"):
            frames = o["frames"] if k == "stack" else [o]
            got = t.split("\t")[1:]
            if got != [frame_text(f) for f in frames]:
                same = False
                print("    | %r != %r" % (got, [frame_text(f) for f in frames]))
            folded_want.append(";".join(folded_name(f) for f in reversed(frames)) + " %d" % o["count"])
        elif k == "plain":
            if t != frame_text(o):
                same = False
                print("    | %r != %r" % (t, frame_text(o)))
            folded_want.append(folded_name(o) + " 1")
    check(same, "%s: JSON frames are the text output's frames, leaf first" % name)
    # metadata_name beside the name of every resolved frame that names a type
    # or member (an alloc type without a token too), nowhere else (its value:
    # the golden transcripts, and batch-metadata-names.sh against the shell)
    meta_ok, nmeta = True, 0
    for o in objs:
        for f in (o["frames"] if o["kind"] == "stack" else [o] if o["kind"] in ("call", "alloc", "plain") else []):
            tok = int(f.get("token", "0x1b000000"), 16) >> 24
            want = f["status"] == "ok" and tok in TYPE_OR_MEMBER
            has = isinstance(f.get("metadata_name"), str)
            nmeta += has
            if has != want:
                meta_ok = False
                print("    | %r" % f)
    check(meta_ok and nmeta > 0,
          "%s: a metadata_name beside each type or member name (%d)" % (name, nmeta))
    folded = open("%s/%s.folded" % (tmp, name)).read().split("\n")[:-1]
    check(folded == folded_want and folded,
          "%s: folded lines are the records' stacks, root first, with counts (%d)" % (name, len(folded)))
    try:
        s = json.load(open("%s/%s.speedscope" % (tmp, name)))
    except ValueError as e:
        check(False, "%s: speedscope file parses: %s" % (name, e))
        continue
    ok = s.get("$schema") == "https://www.speedscope.app/file-format-schema.json"
    frames = s.get("shared", {}).get("frames")
    ok = ok and isinstance(frames, list) and all(isinstance(f.get("name"), str) for f in frames)
    profs = s.get("profiles")
    ok = ok and isinstance(profs, list) and len(profs) == 1
    if ok:
        p = profs[0]
        ok = (p.get("type") == "sampled" and isinstance(p.get("name"), str) and
              p.get("unit") in ("none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes") and
              isinstance(p.get("startValue"), int) and isinstance(p.get("endValue"), int) and
              len(p["samples"]) == len(p["weights"]) and
              all(0 <= i < len(frames) for st in p["samples"] for i in st) and
              sum(p["weights"]) == p["endValue"] - p["startValue"])
        want = sum(o["count"] for o in objs if o["kind"] in ("stack", "call", "alloc", "plain"))
        ok = ok and p["endValue"] == want
    check(ok, "%s: speedscope file has the required fields and consistent weights" % name)
part()
PY
check_absorb "$tmp/formats.check" $?

# The MVID index: built, then reused without reading any file, then a
# changed file is read again.
idx=$tmp/index
mkdir "$tmp/asm"
cp data/Everything.dll data/Sigs.dll data/pdb/Lines.dll "$tmp/asm/"
echo 'fe9721ae846a4bae8601a052e4c43e45 0x06000001' >"$tmp/one.txt"
run() { "$prog" batch --verbose -a "$tmp/asm" --index "$idx" <"$tmp/one.txt" 2>&1 >/dev/null | grep "MVIDs of"; }
a=$(run); b=$(run); touch -d '2001-01-01' "$tmp/asm/Sigs.dll"; c=$(run)
check() { if [ "$1" = "$2" ]; then check_pass "$3"; else check_fail "$3" "got: $1"; fi; }
check "$a" "mdinspect batch: MVIDs of 0 files from the index, 3 files read" "a cold index reads every file"
check "$b" "mdinspect batch: MVIDs of 3 files from the index, 0 files read" "a warm index reads none"
check "$c" "mdinspect batch: MVIDs of 2 files from the index, 1 files read" "a changed file is read again"
check "$(head -n 1 "$idx")" "#mdinspect-index 1" "the index file starts with its header"

# A log cut before its first record (a header alone): every format ends
# normally (no signal, nothing a sanitizer reports) and --speedscope is
# still a JSON file
printf '#mdprofile 4 runtime=10.0.0 pid=7 ppid=1 mode=sample rate=1000 slice=1000 start=2026-01-01T00:00:00Z\n' \
    >"$tmp/header.log"
for fmt in "" --json --folded --speedscope --pprof "--top 5"; do
    "$prog" batch --no-progress $fmt <"$tmp/header.log" >"$tmp/header.out" 2>"$tmp/header.err"
    st=$?
    ok=no
    [ $st -lt 128 ] && ! grep -q 'runtime error\|Sanitizer' "$tmp/header.err" && ok=yes
    [ "$fmt" = --speedscope ] && [ $ok = yes ] &&
        ! python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$tmp/header.out" 2>/dev/null && ok=no
    check "$ok" yes "a header without records, ${fmt:-text}: status $st, $(head -c 120 "$tmp/header.err" | tr '\n' ' ')"
done
check_done

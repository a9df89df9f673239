#!/bin/sh
# mdinspect batch --pprof: the gzipped profile.proto file, read back by
# protobuf-c's own decoder (tests/batch/pprof_read, which also checks the
# file is a well-formed profile: string table, ids, references, one value
# per sample type), on the logs of tests/cli/inputs/ (batch-*.txt: sample,
# calls and alloc modes, all three in one log, malformed lines), on logs
# written here (two processes, native frames with their files and
# build-ids, no header, nothing at all) and on batch-log.txt cut at every
# 5th byte:
#  - --pprof exits as --folded does and says the same on standard error
#    (a damaged log gives its located errors, and still a whole file);
#  - every sample's frames, leaf first, are the names --folded prints for
#    the same stacks, and its count is theirs (stacks summed);
#  - system_name is the frame as the log wrote it (without its IL offset),
#    file and line those the --json output gives;
#  - sample types, period type and period, default type per mode; cpu
#    nanoseconds = count x 10^9 / rate; alloc bytes the log's; the start
#    time from the header, the duration from #stats; a "pid" label per
#    process, its samples that process's (--pid N --folded);
#  - a managed frame's mapping has its MVID as build-id, a native frame's
#    its ELF file's name and build-id and its offset as the address;
#  - a format-4 log's samples carry tid, thread and slice labels, and
#    --thread keeps one thread.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
reader=$build/tests/batch/pprof_read
[ -x "$prog" ] || { echo "batch-pprof.sh: $prog is not built" >&2; exit 99; }
[ -x "$reader" ] || { echo "batch-pprof.sh: $reader is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-pprof.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-pprof.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

M=c8e53984472d48f98a0624ad8d869103
E=79f08d46c6d14089b1fd9c3ac69e7990
# two processes of different rates, native frames, a recursive stack
cat >"$tmp/two.txt" <<EOF
#mdprofile 3 runtime=10.0.12 pid=101 mode=sample rate=1000 start=2026-11-25T14:21:07Z clock=cpu
stack 7 $M:0x06000002@0x8 $M:0x06000003@0x5 native:libt.so:00ff00ff+0x1a2b
stack 2 native:libc.so.6:abcdef01+0x10!gc native:libt.so:00ff00ff+0x1a2b $M:0x06000003@0x9
stack 3 $M:0x06000002@0x8 $M:0x06000002@0x19 $M:0x06000003@0x9
stack 1 $M:0x06000002@0x8 $M:0x06000003@0x5 native:libt.so:00ff00ff+0x1a2b
#stats samples=13 duration_ms=1500
#mdprofile 3 runtime=10.0.12 pid=202 mode=sample rate=250 start=2026-11-25T14:21:08Z clock=cpu
stack 4 $E:0x06000001@0x0 native!jit
stack 5 $M:0x06000002@0x8 $M:0x06000003@0x5 native:libt.so:00ff00ff+0x1a2b
#stats samples=9 duration_ms=3000
EOF
# no header: records alone (mode from the record, rate unknown)
grep '^stack\|^alloc' tests/cli/inputs/batch-log.txt >"$tmp/bare.txt"
: >"$tmp/empty.txt"
inputs="tests/cli/inputs/batch-log.txt tests/cli/inputs/batch-alloc.txt
        tests/cli/inputs/batch-calls.txt tests/cli/inputs/batch-il.txt
        tests/cli/inputs/batch-malformed.txt $tmp/two.txt $tmp/bare.txt $tmp/empty.txt"
# cut short at every 5th byte
size=$(wc -c <tests/cli/inputs/batch-log.txt)
i=1
while [ "$i" -lt "$size" ]; do
    head -c "$i" tests/cli/inputs/batch-log.txt >"$tmp/cut-$i.txt"
    inputs="$inputs $tmp/cut-$i.txt"
    i=$((i + 5))
done

run() { # run IN NAME FLAGS...: NAME.out, NAME.err, NAME.rc
    in=$1 name=$2
    shift 2
    "$prog" batch --no-progress -a data -a data/pdb "$@" <"$in" >"$name.out" 2>"$name.err"
    echo $? >"$name.rc"
}
n=0
for in in $inputs; do
    n=$((n + 1))
    b=$tmp/in$n
    cp "$in" "$b.log"
    run "$in" "$b.pprof" --pprof
    run "$in" "$b.folded" --folded
    run "$in" "$b.json" --json
    "$reader" "$b.pprof.out" >"$b.decoded" 2>"$b.decoded.err"
    echo $? >"$b.decoded.rc"
    for pid in 101 202; do
        run "$in" "$b.pid$pid" --folded --pid "$pid"
    done
done

python3 - "$tmp" "$n" "$prog" "$reader" <<'PY'
import json, re, subprocess, sys
from collections import Counter
tmp, n, prog = sys.argv[1], int(sys.argv[2]), sys.argv[3]
starts = {}  # (MVID, token) -> {(file, start_line)}
from mdtcheck import check, done

def read(p):
    with open(p, encoding="utf-8", errors="replace") as f:
        return f.read()

def folded(p):
    c = Counter()
    for line in read(p).split("\n"):
        if line:
            stack, count = line.rsplit(" ", 1)
            c[stack] += int(count)
    return c

COUNTS = ("samples", "calls", "alloc_objects")
def count_of(prof, s):
    return sum(v for (t, _), v in zip(prof["sample_type"], s["values"]) if t in COUNTS)
def value(prof, s, name):
    for (t, _), v in zip(prof["sample_type"], s["values"]):
        if t == name:
            return v
    return 0
def stack(s, pid=None):
    return ";".join(f["name"].replace(";", ":") for f in reversed(s["frames"]))

def log_records(text, js):
    """(kind, count, bytes, frames as written, pid, rate) of each record line
    --json took as a record (one JSON line per input line)."""
    out, pid, rate = [], None, 0
    for line, j in zip(text.split("\n"), js):
        f = line.rstrip("\r").split("\t")[0].split(" ")
        if j.get("kind") == "header":
            kv = dict(x.split("=", 1) for x in f[2:] if "=" in x)
            pid, rate = kv.get("pid"), int(kv.get("rate", 0))
        elif j.get("kind") in ("stack", "call", "alloc"):
            skip = 3 if f[0] == "alloc" else 5 if f[0] == "call" and f[2].isdigit() else 2
            out.append((f[0], int(f[1]), int(f[2]) if f[0] == "alloc" else 0, f[skip:], pid, rate))
    return out

ILOFS = re.compile(r"@0x[0-9a-fA-F]+$")
for i in range(1, n + 1):
    b = "%s/in%d" % (tmp, i)
    name = read(b + ".log").split("\n")[0][:60] if i <= 8 else "cut at %d bytes" % len(read(b + ".log").encode())
    whole = i <= 8
    label = "input %d (%s)" % (i, name.strip() or "empty")
    rc, frc = read(b + ".pprof.rc").strip(), read(b + ".folded.rc").strip()
    check(rc == frc and read(b + ".pprof.err") == read(b + ".folded.err"),
          "%s: --pprof exits %s and says what --folded says (exits %s)" % (label, rc, frc))
    drc = read(b + ".decoded.rc").strip()
    if not check(drc == "0", "%s: protobuf-c decodes a well-formed profile (%s %s)"
                 % (label, drc, read(b + ".decoded.err").strip())):
        continue
    prof = json.loads(read(b + ".decoded"))
    got = Counter()
    for s in prof["samples"]:
        got[stack(s)] += count_of(prof, s)
    want = folded(b + ".folded.out")
    check(got == want, "%s: %d samples, the stacks and counts --folded prints (%d distinct)%s"
          % (label, len(prof["samples"]), len(want),
             "" if got == want else ": %r" % sorted(set(got.items()) ^ set(want.items()))[:4]))
    if not whole:
        continue
    js = [json.loads(x) for x in read(b + ".json.out").split("\n") if x]
    recs = log_records(read(b + ".log"), js)
    # system names: the log's frames, without the IL offset (native frames keep theirs)
    gotsys = Counter()
    for s in prof["samples"]:
        gotsys[tuple(f["system_name"] for f in s["frames"])] += count_of(prof, s)
    wantsys = Counter()
    for kind, c, _, fr, _, _ in recs:
        wantsys[tuple(x if x.startswith("native") else ILOFS.sub("", x) for x in fr)] += c
    check(gotsys == wantsys, "%s: system_name is each frame as the log wrote it%s" % (label,
          "" if gotsys == wantsys else ": %r" % sorted(set(gotsys.items()) ^ set(wantsys.items()))[:4]))
    okrec = [j for j in js if j.get("kind") in ("stack", "call", "alloc")]
    # file and line: those of --json, frame by frame
    gotfl, wantfl = Counter(), Counter()
    for s in prof["samples"]:
        gotfl[tuple((f["file"] or None, f["line"] or None) for f in s["frames"])] += count_of(prof, s)
    for j in okrec:
        wantfl[tuple((f.get("file"), f.get("line")) for f in j.get("frames", [j]))] += j["count"]
    check(gotfl == wantfl, "%s: every frame's file and line are --json's" % label)
    # values per mode
    kinds = {k for k, *_ in recs}
    types = [t for t, _ in prof["sample_type"]]
    want_types = []
    for k, ts in (("stack", ["samples", "cpu"]), ("call", ["calls"]), ("alloc", ["alloc_objects", "alloc_space"])):
        if k in kinds or (not kinds and k == "stack"):
            want_types += ts
    check(types == want_types, "%s: sample types %s" % (label, types))
    if "stack" in kinds:
        rates = {r for k, _, _, _, _, r in recs if k == "stack"}
        bad = []
        for s in prof["samples"]:
            c = value(prof, s, "samples")
            pid = s["labels"].get("pid")
            rate = next((r for k, _, _, _, p, r in recs if k == "stack" and p == str(pid)), 0)
            if c and value(prof, s, "cpu") != (c * 10**9 // rate if rate else 0):
                bad.append(s)
        check(not bad and prof["period_type"] == ["cpu", "nanoseconds"] and
              prof["period"] == (10**9 // min(rates) if len(rates) == 1 and 0 not in rates else 0) and
              prof["default_sample_type"] == "cpu" and
              (bool(prof["comments"]) == (len(rates) > 1 or 0 in rates)),
              "%s: cpu nanoseconds are count x 10^9 / the log's rate, period %d, a comment "
              "when rates differ or are unknown %r" % (label, prof["period"], prof["comments"]))
    if "alloc" in kinds:
        byt = Counter()
        for k, c, by, fr, _, _ in recs:
            if k == "alloc":
                byt[fr[0]] += by
        got = Counter()
        for s in prof["samples"]:
            if value(prof, s, "alloc_space"):
                got[s["frames"][0]["system_name"]] += value(prof, s, "alloc_space")
        check(got == byt, "%s: alloc_space per type is the log's bytes" % label)
    # header times
    hdr = re.search(r"start=(\S+)", read(b + ".log"))
    durs = [int(x) for x in re.findall(r"duration_ms=(\d+)", read(b + ".log"))]
    if hdr and prof["samples"]:
        import calendar, time
        t0 = calendar.timegm(time.strptime(hdr.group(1), "%Y-%m-%dT%H:%M:%SZ")) * 10**9
        check(prof["time_nanos"] == t0, "%s: time_nanos is the header's start" % label)
    # pid labels
    pids = {s["labels"].get("pid") for s in prof["samples"]}
    if len(pids) > 1:
        for pid in sorted(pids):
            got = Counter()
            for s in prof["samples"]:
                if s["labels"].get("pid") == pid:
                    got[stack(s)] += count_of(prof, s)
            check(got == folded("%s.pid%d.out" % (b, pid)),
                  "%s: the samples labelled pid %d are that process's (--pid %d --folded)" % (label, pid, pid))
        # start of the first, end of the last (1.5 s after 14:21:07, 3 s after 14:21:08)
        check(prof["duration_nanos"] == 4 * 10**9, "%s: duration from the first start to the last end (%d)"
              % (label, prof["duration_nanos"]))
    elif durs and prof["samples"]:
        check(prof["duration_nanos"] == durs[0] * 10**6, "%s: duration_nanos is #stats' duration_ms" % label)
    for s in prof["samples"]:
        for f in s["frames"]:
            m = re.match(r"([0-9a-f]{32}):(0x06[0-9a-f]{6})", f["system_name"])
            if m and f["file"]:
                starts.setdefault(m.groups(), set()).add((f["file"], f["start_line"]))
    # mappings
    bad = []
    for s in prof["samples"]:
        for f in s["frames"]:
            sn = f["system_name"]
            m = re.match(r"native:([^:]+):([0-9a-f]*)\+0x([0-9a-f]+)", sn)
            # a method frame that resolved, or whose module was not found
            if re.match(r"[0-9a-f]{32}:0x06", sn) and f["build_id"] != sn[:32] and \
                    (not f["name"].startswith("[") or "unknown MVID" in f["name"]):
                bad.append(f)
            if m and (f["mapping"], f["build_id"], f["address"]) != (m.group(1), m.group(2), int(m.group(3), 16)):
                bad.append(f)
            if sn in ("native", "stub", "dynamic", "unmanaged") and f["mapping"] is not None:
                bad.append(f)
    check(not bad, "%s: mappings: MVID as build-id, a native frame's file, build-id and offset%s"
          % (label, ": %r" % bad[:2] if bad else ""))

# format 4: every sample of a thread's record is labelled with its tid, the
# thread's last name in the log and its slice's start in milliseconds, and
# counts sum per (tid, slice) to the log's; --thread keeps one thread
def slices_of(args):
    r = subprocess.run([prog, "batch", "--no-progress", "--pprof", "-a", "data", "-a", "data/pdb"]
                       + args, stdin=open("tests/cli/inputs/batch-slices.txt", "rb"),
                       capture_output=True)
    d = subprocess.run([sys.argv[4], "/dev/stdin"],
                       input=r.stdout, capture_output=True)
    return json.loads(d.stdout) if d.returncode == 0 else None
want = Counter()
for line in read("tests/cli/inputs/batch-slices.txt").split("\n"):
    f = line.split(" ")
    if (f[0] == "stack" and len(f) > 4 and f[2].isdigit() and int(f[2]) >= 1 and f[3].isdigit()
            and int(f[3]) < 2**32):
        want[(int(f[2]), int(f[3]) * 1000)] += int(f[1])
prof = slices_of([])
got, names, unlabelled = Counter(), {}, 0
for smp in (prof or {}).get("samples", []):
    lb = smp.get("labels", {})
    if "tid" not in lb or "slice" not in lb:
        unlabelled += 1
        continue
    got[(lb["tid"], lb["slice"])] += count_of(prof, smp)
    names.setdefault(lb["tid"], set()).add(lb.get("thread"))
check(prof is not None and got == want and not unlabelled,
      "format 4: samples per (tid, slice ms) are the log's (%d keys; unlabelled %d)" % (len(want), unlabelled))
check(names.get(101) == {"Renamed"} and names.get(102) == {"dotnet"} and names.get(103) == {None},
      "format 4: the thread label is the thread's last name (name=, else os=), none without a line: %r" % names)
one = slices_of(["--thread", "Worker-A"])
tids = {smp.get("labels", {}).get("tid") for smp in (one or {}).get("samples", [])}
check(one is not None and tids == {101}, "--pprof --thread Worker-A keeps tid 101 alone: %r" % tids)

# a function's start_line: where batch puts the method without an IL offset
# (its first sequence point) when that is in the function's file, else 0
keys = sorted(starts)
plain = "".join("%s %s\n" % k for k in keys)
r = subprocess.run([prog, "batch", "--no-progress", "-a", "data", "-a", "data/pdb"],
                   input=plain.encode(), capture_output=True)
bad = []
for k, line in zip(keys, r.stdout.decode("utf-8", "replace").split("\n")):
    m = re.search(r" \((.*):(\d+)\)$", line)
    for file, start in starts[k]:
        want = int(m.group(2)) if m and m.group(1) == file else 0
        if start != want:
            bad.append((k, file, start, want))
check(keys and not bad and any(st for v in starts.values() for _, st in v),
      "start_line of %d methods: their first line when in the function's file, else 0%s"
      % (len(keys), ": %r" % bad[:3] if bad else ""))
done()
PY

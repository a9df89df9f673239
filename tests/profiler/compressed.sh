#!/bin/sh
# A self-contained single-file app with compressed assemblies (data/profiler/
# Workload published with --self-contained true -p:PublishSingleFile=true
# -p:EnableCompressionInSingleFile=true): the runtime inflates each bundled
# assembly into anonymous memory and copies a ReadyToRun one, section by
# section, into an allocation of its SizeOfImage (a loader layout without
# a file; the framework's assemblies are such). Every frame must be named
# in-process (no unknown frame: the profiler read each image from those
# anonymous mappings, maps.c) as the program named itself, and offline by
# mdinspect batch from the bundle alone (the header's bundles=), with no
# frame unresolved and the same names as in-process.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
src=$work/src/Compressed
out=$work/bin/Compressed
(
    flock 9
    if [ ! -f "$out/.stamp" ] || [ -n "$(find "$top/data/profiler/Workload" -newer "$out/.stamp" -type f | head -n 1)" ]; then
        rm -rf "$src" "$out"
        mkdir -p "$work/src"
        cp -R "$top/data/profiler/Workload" "$src"
        chmod -R u+w "$src"
        rm -rf "$src/obj" "$src/bin"
        (cd "$src" && env -u LD_PRELOAD dotnet publish -c Release -r linux-x64 --self-contained true \
            -p:PublishSingleFile=true -p:EnableCompressionInSingleFile=true -nologo -v q \
            -nodeReuse:false -p:UseSharedCompilation=false \
            -o "$out" >"$src.publish.log" 2>&1) || exit 3
        touch "$out/.stamp"
    fi
) 9>"$work/.compressed.lock" || { cat "$src.publish.log" >&2; skip "dotnet publish of a self-contained single-file app failed (is the linux-x64 runtime pack there, or NuGet?)"; }
[ "$(uname -m)" = x86_64 ] || skip "the published app is for linux-x64"
[ -x "$out/Workload" ] && [ ! -e "$out/Workload.dll" ] && [ ! -e "$out/System.Private.CoreLib.dll" ] ||
    fail "the publish left no self-contained single-file app in $out"
log=$work/sc-compressed.log
profile "$log" --debug-names -- "$out/Workload" names "$work/sc-compressed.expected" 1500 \
    >"$work/sc-compressed.out" 2>&1 || { cat "$work/sc-compressed.out" >&2; fail "the profiled run failed"; }
head -n 1 "$log" | tr ' ' '\n' | grep -qx "bundles=$out/Workload" ||
    fail "the header names no bundle: $(head -n 1 "$log" | cut -c1-400)"
# in-process: every frame named right, none unknown (mode_names checks
# unknown=0 whatever the coverage)
check named "$log" "$work/sc-compressed.expected" >"$work/sc-compressed.check" || {
    cat "$work/sc-compressed.check" >&2
    fail "the log of the compressed single-file app is not complete and right"
}
tail -n 1 "$work/sc-compressed.check"
# offline, from the bundle alone: the same names as the profiler's own
mdi=$build/mdinspect/mdinspect
"$mdi" batch --no-progress --json <"$log" >"$work/sc-compressed.json" ||
    fail "mdinspect batch < the log failed: $(head -c 300 "$work/sc-compressed.json")"
python3 - "$log" "$work/sc-compressed.json" <<'PY' || exit 1
import json, re, sys
# per stack record, in order: the log's managed frames (MVID:TOKEN...)
# against the frames batch named (status ok)
logged = []
for line in open(sys.argv[1], encoding="utf-8"):
    if line.startswith("stack "):
        frames = line.rstrip("\n").split("\t")[0].split(" ")[4:]
        logged.append(sum(1 for f in frames if re.match(r"^[0-9a-f]{32}:0x", f)))
named, bad = [], 0
for x in open(sys.argv[2], encoding="utf-8"):
    r = json.loads(x)
    if r.get("kind") == "stack":
        named.append(sum(1 for f in r["frames"] if f.get("status") == "ok"))
        bad += sum(1 for f in r["frames"] if f.get("status") == "unresolved")
ok = logged and named == logged and bad == 0
print("%s offline from the bundle alone: %d stack records, %d managed frames, %d named, %d unresolved"
      % ("PASS" if ok else "FAIL", len(logged), sum(logged), sum(named), bad))
sys.exit(0 if ok else 1)
PY
# the bundle's assemblies in batch's on-disk index: the second run reads
# their MVIDs from it (none inflated again) and names everything the same
idx=$work/sc-compressed.index
rm -f "$idx"
for run in 1 2; do
    "$mdi" batch --no-progress --no-log-folders --verbose -a "$out/Workload" --index "$idx" <"$log" \
        >"$work/sc-compressed.idx$run" 2>"$work/sc-compressed.idx$run.err" ||
        fail "mdinspect batch --index (run $run) failed: $(head -c 300 "$work/sc-compressed.idx$run.err")"
done
cmp -s "$work/sc-compressed.idx1" "$work/sc-compressed.idx2" || fail "the run from the index named otherwise"
read1=$(sed -n 's/.*MVIDs of \([0-9]*\) files from the index, \([0-9]*\) files read.*/\1 \2/p' "$work/sc-compressed.idx1.err")
read2=$(sed -n 's/.*MVIDs of \([0-9]*\) files from the index, \([0-9]*\) files read.*/\1 \2/p' "$work/sc-compressed.idx2.err")
set -- $read1 $read2
[ "$#" = 4 ] && [ "$1" = 0 ] && [ "$2" -ge 100 ] && [ "$4" -lt 5 ] && [ $(($3 + $4)) = "$2" ] ||
    fail "the index did not serve the bundle's assemblies: first run '$read1', second '$read2' (from the index, read)"
grep -c '!' "$idx" | { read n; [ "$n" -ge 100 ]; } || fail "the index holds no APP!PATH entries"
echo "PASS batch --index: $2 files read the first time (the executable, its assemblies), then $3 MVIDs from the index and $4 file read"

#!/bin/sh
# bench/batch/run.sh: `mdinspect batch` against the libmono peer
# (bench/batch/batch_mono) on the same inputs in the same run
# (bench/batch/README.md).
#
#   bench/batch/run.sh [BUILDDIR]     default: <srcdir>/build
#   RUNS=5 LINES=1000000 CG_LINES=200000 CG_FULL=0 RT=0 bench/batch/run.sh
#
# Inputs (bench/batch/gen, fixed seed) over the Mono 4.5 framework
# (/usr/lib/mono/4.5/*.dll and Facades/*.dll):
#   path    LINES `PATH TOKEN` lines, (module, MethodDef) drawn uniformly
#           over every MethodDef of the framework
#   mvid    the same pairs as `MVID TOKEN` lines (-a the framework folders;
#           the index cold, i.e. rebuilt, then warm)
#   stacks  LINES/20 `stack` records of 20 frames `mvid:token@il`
# mdinspect runs with one thread (-t 1) and with its default (one per CPU);
# the peer is single-threaded. Reports per input: CPU seconds (user+sys,
# median of RUNS, from /usr/bin/time), wall seconds (median), peak RSS,
# and instructions (callgrind, whole process for mdinspect with one
# thread, the timed function whole_run() for the peer, which leaves out its
# JIT init) on the first CG_LINES lines, and with CG_FULL=1 on all of
# them (the peer takes minutes under callgrind). The mdinspect binary is
# run directly, not through libtool's wrapper script (whose shell would be
# timed too).
#
# Where the time goes (mdinspect alone): `cat` of the path input (reading
# and writing that many bytes), the distinct lines of the path input only
# (naming 260,000 methods, no line met twice), and LINES lines that name
# only the methods of the first LINES/50 lines (the frames stay in the
# caches: what a line costs when memory is not in the way).
#
# The cache bound (--cache-mb, issue 25): the path and stacks inputs and a
# hostile log of LINES/4 stacks of two frames of distinct junk MVIDs, each
# with mdinspect -t 1 at its default bound and at SMALL_MB (default 16),
# side by side with the peer; peak RSS, how often the caches started over
# (--verbose), and instructions of the path input's first CG_LINES lines
# at both bounds. CACHE_ONLY=1 runs this part alone.
#
# RT=1 runs every timed command under `chrt -f 10` (SCHED_FIFO, as root):
# on a machine others load, the run then has the CPUs to itself and its
# wall times approach a quiet machine's; the others stall meanwhile (about
# 30 s in all, most of it the peer's).
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
RUNS=${RUNS:-5}
LINES=${LINES:-1000000}
CG_LINES=${CG_LINES:-200000}
CG_FULL=${CG_FULL:-0}
RT=${RT:-0}
rt=
[ "$RT" = 1 ] && rt="chrt -f 10"
mdi=$build/mdinspect/.libs/mdinspect
[ -x "$mdi" ] || mdi=$build/mdinspect/mdinspect # a static build has no wrapper
peer=$build/bench/batch/batch_mono
gen=$build/bench/batch/gen
fw=/usr/lib/mono/4.5
for p in "$mdi" "$peer" "$gen"; do
    [ -x "$p" ] || { echo "run.sh: $p is not built (make in $build)" >&2; exit 1; }
done
LD_LIBRARY_PATH=$build/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
files=$(ls "$fw"/*.dll "$fw"/Facades/*.dll)
"$gen" path "$LINES" $files >"$tmp/path.txt" 2>/dev/null
"$gen" mvid "$LINES" $files >"$tmp/mvid.txt" 2>/dev/null
"$gen" stacks $((LINES / 20)) 20 $files >"$tmp/stacks.txt" 2>/dev/null

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure NAME IN CMD...: RUNS timed runs -> cpu, wall, rss medians
measure() {
    name=$1; in=$2; shift 2
    : >"$tmp/t"
    i=0
    while [ $i -lt "$RUNS" ]; do
        [ -n "${PRE:-}" ] && eval "$PRE"
        $rt /usr/bin/time -f "%U %S %e %M" -o "$tmp/t1" "$@" <"$in" >"$tmp/out.$name" 2>/dev/null || true
        grep -v '^Command' "$tmp/t1" >>"$tmp/t" # "exited with non-zero status": unresolved lines
        i=$((i + 1))
    done
    cpu=$(awk '{print $1 + $2}' "$tmp/t" | median)
    wall=$(awk '{print $3}' "$tmp/t" | median)
    rss=$(awk '{print $4}' "$tmp/t" | median)
    printf '%-24s cpu %6.3f s  wall %6.3f s  rss %7d KiB\n' "$name" "$cpu" "$wall" "$rss"
}

ir() { # ir NAME IN LINES TOGGLE CMD...
    name=$1; in=$2; n=$3; toggle=$4; shift 4
    head -n "$n" "$in" >"$tmp/cg.in"
    if [ -n "$toggle" ]; then t="--toggle-collect=$toggle"; else t=; fi
    valgrind --tool=callgrind $t --callgrind-out-file="$tmp/cg.out" "$@" <"$tmp/cg.in" \
        >/dev/null 2>"$tmp/cg.err" || true
    printf '%-24s instructions (first %d lines): %s\n' "$name" "$n" \
        "$(grep -o 'Collected : [0-9]*' "$tmp/cg.err" | awk '{print $3}')"
}

A="-a $fw -a $fw/Facades"
SMALL_MB=${SMALL_MB:-16}
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg), CPUs $(nproc)"
if [ "${CACHE_ONLY:-0}" = 1 ]; then
    "$mdi" batch $A --index "$tmp/idx" </dev/null >/dev/null 2>&1 || true
else
echo "== PATH TOKEN, $LINES lines"
measure mdinspect-path-t1 "$tmp/path.txt" "$mdi" batch --no-progress -t 1
measure mdinspect-path "$tmp/path.txt" "$mdi" batch --no-progress
measure libmono-path "$tmp/path.txt" "$peer"
cmp -s "$tmp/out.mdinspect-path" /dev/null && echo "run.sh: empty output" >&2
echo "== MVID TOKEN, $LINES lines"
PRE="rm -f $tmp/idx" measure mdinspect-mvid-cold-t1 "$tmp/mvid.txt" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
PRE="rm -f $tmp/idx" measure mdinspect-mvid-cold "$tmp/mvid.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
"$mdi" batch $A --index "$tmp/idx" </dev/null >/dev/null 2>&1 || true
measure mdinspect-mvid-warm-t1 "$tmp/mvid.txt" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
measure mdinspect-mvid-warm "$tmp/mvid.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
measure libmono-mvid "$tmp/mvid.txt" "$peer" "$fw"
echo "== stacks of depth 20, $((LINES / 20)) records"
measure mdinspect-stacks-t1 "$tmp/stacks.txt" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
measure mdinspect-stacks "$tmp/stacks.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
measure libmono-stacks "$tmp/stacks.txt" "$peer" "$fw"
# Same answers: every line resolved on both sides, same line counts, and
# the same bytes with one thread and with several.
for k in path mvid-warm stacks; do
    a=$(wc -l <"$tmp/out.mdinspect-$k"); b=$(wc -l <"$tmp/out.libmono-${k%-warm}")
    u=$(grep -c unresolved "$tmp/out.mdinspect-$k" || true)
    same=$(cmp -s "$tmp/out.mdinspect-$k" "$tmp/out.mdinspect-$k-t1" && echo same || echo DIFFERENT)
    echo "check $k: mdinspect $a lines ($u unresolved, threads: $same), libmono $b lines"
done
fi # CACHE_ONLY
echo "== cache bound: default and --cache-mb $SMALL_MB (mdinspect -t 1), libmono"
awk -v n=$((LINES / 4)) 'BEGIN { srand(25); print "#mdprofile 1 pid=1 mode=sample"
    for (i = 0; i < n; i++) {
        printf "stack 1 "
        for (f = 0; f < 2; f++)
            printf "%08x%08x%08x%08x:0x06000001%s", int(rand() * 4294967296),
                int(rand() * 4294967296), int(rand() * 4294967296), int(rand() * 4294967296),
                f ? "\n" : " "
    }
    print "#stats" }' >"$tmp/junk.txt"
for k in path stacks junk; do
    measure mdinspect-$k-default "$tmp/$k.txt" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
    measure mdinspect-$k-small "$tmp/$k.txt" "$mdi" batch --no-progress -t 1 --cache-mb "$SMALL_MB" \
        $A --index "$tmp/idx"
    for b in default small; do
        o=; [ $b = small ] && o="--cache-mb $SMALL_MB"
        "$mdi" batch --no-progress --verbose -t 1 $o $A --index "$tmp/idx" <"$tmp/$k.txt" 2>&1 \
            >/dev/null | grep 'caches of' | sed "s/^/   $k $b: /"
    done
    same=$(cmp -s "$tmp/out.mdinspect-$k-default" "$tmp/out.mdinspect-$k-small" && echo same || echo DIFFERENT)
    echo "check $k: output with --cache-mb $SMALL_MB: $same"
done
[ "${CACHE_ONLY:-0}" = 1 ] && {
    measure libmono-path "$tmp/path.txt" "$peer"
    measure libmono-stacks "$tmp/stacks.txt" "$peer" "$fw"
}
ir mdinspect-path-default "$tmp/path.txt" "$CG_LINES" "" "$mdi" batch --no-progress -t 1
ir mdinspect-path-small "$tmp/path.txt" "$CG_LINES" "" "$mdi" batch --no-progress -t 1 --cache-mb "$SMALL_MB"
[ "${CACHE_ONLY:-0}" = 1 ] && exit 0
echo "== where the time goes (mdinspect)"
awk '!seen[$0]++' "$tmp/path.txt" >"$tmp/uniq.txt"
head -n $((LINES / 50)) "$tmp/path.txt" >"$tmp/few.txt"
i=0; while [ $i -lt 50 ]; do cat "$tmp/few.txt"; i=$((i + 1)); done >"$tmp/rep.txt"
measure cat-path "$tmp/path.txt" cat
measure uniq-t1 "$tmp/uniq.txt" "$mdi" batch --no-progress -t 1
measure uniq "$tmp/uniq.txt" "$mdi" batch --no-progress
measure repeated-t1 "$tmp/rep.txt" "$mdi" batch --no-progress -t 1
measure repeated "$tmp/rep.txt" "$mdi" batch --no-progress
echo "   ($(wc -l <"$tmp/uniq.txt") distinct lines; the repeated input names $(sort -u "$tmp/few.txt" | wc -l) methods)"
echo "== instructions"
ir mdinspect-path "$tmp/path.txt" "$CG_LINES" "" "$mdi" batch --no-progress -t 1
ir libmono-path "$tmp/path.txt" "$CG_LINES" whole_run "$peer"
ir mdinspect-mvid-warm "$tmp/mvid.txt" "$CG_LINES" "" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
ir libmono-mvid "$tmp/mvid.txt" "$CG_LINES" whole_run "$peer" "$fw"
ir mdinspect-stacks "$tmp/stacks.txt" $((LINES / 20)) "" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
ir libmono-stacks "$tmp/stacks.txt" $((LINES / 20)) whole_run "$peer" "$fw"
ir mdinspect-path-2threads "$tmp/path.txt" "$LINES" "" "$mdi" batch --no-progress -t 2
ir mdinspect-uniq "$tmp/uniq.txt" "$LINES" "" "$mdi" batch --no-progress -t 1
ir mdinspect-repeated "$tmp/rep.txt" "$LINES" "" "$mdi" batch --no-progress -t 1
if [ "$CG_FULL" = 1 ]; then
    ir mdinspect-path "$tmp/path.txt" "$LINES" "" "$mdi" batch --no-progress -t 1
    ir libmono-path "$tmp/path.txt" "$LINES" whole_run "$peer"
    ir mdinspect-mvid-warm "$tmp/mvid.txt" "$LINES" "" "$mdi" batch --no-progress -t 1 $A --index "$tmp/idx"
    ir libmono-mvid "$tmp/mvid.txt" "$LINES" whole_run "$peer" "$fw"
fi

#!/bin/sh
# bench/batch/run.sh: `mdinspect batch` against the libmono peer
# (bench/batch/batch_mono) on the same inputs in the same run
# (bench/batch/README.md).
#
#   bench/batch/run.sh [BUILDDIR]     default: <srcdir>/build
#   RUNS=5 LINES=1000000 CG_LINES=200000 bench/batch/run.sh
#
# Inputs (bench/batch/gen, fixed seed) over the Mono 4.5 framework
# (/usr/lib/mono/4.5/*.dll and Facades/*.dll):
#   path    LINES `PATH TOKEN` lines, (module, MethodDef) drawn uniformly
#           over every MethodDef of the framework
#   mvid    the same pairs as `MVID TOKEN` lines (-a the framework folders;
#           the index cold, i.e. rebuilt, then warm)
#   stacks  LINES/20 `stack` records of 20 frames `mvid:token@il`
# Reports per input: CPU seconds (user+sys, median of RUNS, from
# /usr/bin/time), wall seconds (median), peak RSS, and instructions
# (callgrind, whole process for mdinspect, the timed function whole_run()
# for the peer, which leaves out its JIT init) on the first CG_LINES lines.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
RUNS=${RUNS:-5}
LINES=${LINES:-1000000}
CG_LINES=${CG_LINES:-200000}
mdi=$build/mdinspect/mdinspect
peer=$build/bench/batch/batch_mono
gen=$build/bench/batch/gen
fw=/usr/lib/mono/4.5
for p in "$mdi" "$peer" "$gen"; do
    [ -x "$p" ] || { echo "run.sh: $p is not built (make in $build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
files=$(ls "$fw"/*.dll "$fw"/Facades/*.dll)
"$gen" path "$LINES" $files >"$tmp/path.txt" 2>/dev/null
"$gen" mvid "$LINES" $files >"$tmp/mvid.txt" 2>/dev/null
"$gen" stacks $((LINES / 20)) 20 $files >"$tmp/stacks.txt" 2>/dev/null
lt="$build/libtool --mode=execute"

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

# measure NAME CMD...: RUNS timed runs -> cpu, wall, rss medians
measure() {
    name=$1; in=$2; shift 2
    : >"$tmp/t"
    i=0
    while [ $i -lt "$RUNS" ]; do
        [ -n "${PRE:-}" ] && eval "$PRE"
        /usr/bin/time -f "%U %S %e %M" -o "$tmp/t1" "$@" <"$in" >"$tmp/out.$name" 2>/dev/null || true
        cat "$tmp/t1" >>"$tmp/t"
        i=$((i + 1))
    done
    cpu=$(awk '{print $1 + $2}' "$tmp/t" | median)
    wall=$(awk '{print $3}' "$tmp/t" | median)
    rss=$(awk '{print $4}' "$tmp/t" | median)
    printf '%-22s cpu %6.3f s  wall %6.3f s  rss %7d KiB\n' "$name" "$cpu" "$wall" "$rss"
}

ir() { # ir NAME IN TOGGLE CMD...
    name=$1; in=$2; toggle=$3; shift 3
    head -n "$CG_LINES" "$in" >"$tmp/cg.in"
    if [ -n "$toggle" ]; then t="--toggle-collect=$toggle"; else t=; fi
    $lt valgrind --tool=callgrind $t --callgrind-out-file="$tmp/cg.out" "$@" <"$tmp/cg.in" \
        >/dev/null 2>"$tmp/cg.err" || true
    printf '%-22s instructions (first %d lines): %s\n' "$name" "$CG_LINES" \
        "$(grep -o 'Collected : [0-9]*' "$tmp/cg.err" | awk '{print $3}')"
}

A="-a $fw -a $fw/Facades"
echo "== PATH TOKEN, $LINES lines"
measure mdinspect-path "$tmp/path.txt" "$mdi" batch --no-progress
measure libmono-path "$tmp/path.txt" "$peer"
cmp -s "$tmp/out.mdinspect-path" /dev/null && echo "run.sh: empty output" >&2
echo "== MVID TOKEN, $LINES lines"
PRE="rm -f $tmp/idx" measure mdinspect-mvid-cold "$tmp/mvid.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
"$mdi" batch $A --index "$tmp/idx" </dev/null >/dev/null 2>&1 || true
measure mdinspect-mvid-warm "$tmp/mvid.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
measure libmono-mvid "$tmp/mvid.txt" "$peer" "$fw"
echo "== stacks of depth 20, $((LINES / 20)) records"
measure mdinspect-stacks "$tmp/stacks.txt" "$mdi" batch --no-progress $A --index "$tmp/idx"
measure libmono-stacks "$tmp/stacks.txt" "$peer" "$fw"
# Same answers: every line resolved on both sides, same line counts.
for k in path mvid-warm stacks; do
    a=$(wc -l <"$tmp/out.mdinspect-$k"); b=$(wc -l <"$tmp/out.libmono-${k%-warm}")
    u=$(grep -c unresolved "$tmp/out.mdinspect-$k" || true)
    echo "check $k: mdinspect $a lines ($u unresolved), libmono $b lines"
done
echo "== instructions"
ir mdinspect-path "$tmp/path.txt" "" "$mdi" batch --no-progress
ir libmono-path "$tmp/path.txt" whole_run "$peer"
ir mdinspect-mvid-warm "$tmp/mvid.txt" "" "$mdi" batch --no-progress $A --index "$tmp/idx"
ir libmono-mvid "$tmp/mvid.txt" whole_run "$peer" "$fw"
ir mdinspect-stacks "$tmp/stacks.txt" "" "$mdi" batch --no-progress $A --index "$tmp/idx"
ir libmono-stacks "$tmp/stacks.txt" whole_run "$peer" "$fw"

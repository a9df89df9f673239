#!/bin/sh
# bench/batch/json.sh: what JSON output costs, in `mdinspect batch --json`
# and in the shell's `-j` printer, against text, and against a second build
# side by side (the same inputs in the same run).
#
#   bench/batch/json.sh BUILDDIR [BASE_BUILDDIR]
#   LINES=200000 RUNS=5 bench/batch/json.sh build /tmp/base/build
#
# Inputs (bench/batch/gen, fixed seed, over the Mono 4.5 framework):
#   path    LINES `PATH TOKEN` lines, (module, MethodDef) drawn uniformly
#   stacks  LINES/20 `stack` records of 20 frames `mvid:token@il`
# Each input is run with one thread (-t 1) as text and as --json. Reports,
# per build: instructions (callgrind, the whole process) and instructions
# per input line; CPU seconds (user+sys, median and min-max of RUNS runs;
# the machine is shared: read the instructions first). The shell: `open`
# of the framework then `types -a`, text and -j (JSON Lines, one object per
# type), instructions and instructions per type listed. With a base build,
# the ratio of instructions (build / base) and whether the outputs are the
# same bytes.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: json.sh BUILDDIR [BASE_BUILDDIR]}
base=${2:-}
LINES=${LINES:-200000}
RUNS=${RUNS:-5}
fw=/usr/lib/mono/4.5
command -v valgrind >/dev/null || { echo "json.sh: needs valgrind" >&2; exit 1; }
bin() { # the program itself, not libtool's wrapper script
    if [ -x "$1/mdinspect/.libs/mdinspect" ]; then echo "$1/mdinspect/.libs/mdinspect"; else echo "$1/mdinspect/mdinspect"; fi
}
gen=$build/bench/batch/gen
[ -x "$gen" ] || { echo "json.sh: $gen is not built" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
files=$(ls "$fw"/*.dll "$fw"/Facades/*.dll)
"$gen" path "$LINES" $files >"$tmp/path.txt" 2>/dev/null
"$gen" stacks $((LINES / 20)) 20 $files >"$tmp/stacks.txt" 2>/dev/null
A="-a $fw -a $fw/Facades"

# ir NAME LINES BUILD CMD...: instructions of the whole process
ir() {
    name=$1; n=$2; b=$3; shift 3
    LD_LIBRARY_PATH=$b/libmdtools/.libs valgrind --tool=callgrind \
        --callgrind-out-file="$tmp/cg.out" "$@" >"$tmp/out.$name" 2>"$tmp/cg.err" || true
    i=$(grep -o 'Collected : [0-9]*' "$tmp/cg.err" | awk '{print $3}')
    printf '%-34s %14s instructions  %8.1f a line\n' "$name" "$i" "$(echo "$i $n" | awk '{print $1 / $2}')"
    echo "$name $i" >>"$tmp/ir"
}
# cpu NAME BUILD IN CMD...: median (min-max) CPU seconds of RUNS runs
cpu() {
    name=$1; b=$2; in=$3; shift 3
    : >"$tmp/t"
    i=0
    while [ $i -lt "$RUNS" ]; do
        LD_LIBRARY_PATH=$b/libmdtools/.libs /usr/bin/time -f "%U %S" -o "$tmp/t1" "$@" <"$in" \
            >/dev/null 2>&1 || true
        grep -v '^Command' "$tmp/t1" | awk '{print $1 + $2}' >>"$tmp/t"
        i=$((i + 1))
    done
    sort -n "$tmp/t" | awk -v n="$name" '{a[NR]=$1} END {printf "%-34s cpu %.3f s (%.3f-%.3f)\n", n, a[int((NR+1)/2)], a[1], a[NR]}'
}

one() { # one TAG BUILD
    tag=$1; b=$2; mdi=$(bin "$b")
    "$mdi" batch $A --index "$tmp/idx.$tag" </dev/null >/dev/null 2>&1 || true
    for k in path stacks; do
        n=$(wc -l <"$tmp/$k.txt")
        for f in text json; do
            o=; [ $f = json ] && o=--json
            ir "$tag $k $f" "$n" "$b" "$mdi" batch --no-progress -t 1 $o $A --index "$tmp/idx.$tag" <"$tmp/$k.txt"
        done
    done
    ntypes=$(LD_LIBRARY_PATH=$b/libmdtools/.libs "$mdi" -j -c "open $fw/*.dll $fw/Facades/*.dll; types -a" | grep -c '"token"')
    ir "$tag shell types -a text" "$ntypes" "$b" "$mdi" -c "open $fw/*.dll $fw/Facades/*.dll; types -a"
    ir "$tag shell types -a json" "$ntypes" "$b" "$mdi" -j -c "open $fw/*.dll $fw/Facades/*.dll; types -a"
    ir "$tag shell open" "$ntypes" "$b" "$mdi" -c "open $fw/*.dll $fw/Facades/*.dll"
    for k in path stacks; do
        for f in text json; do
            o=; [ $f = json ] && o=--json
            cpu "$tag $k $f" "$b" "$tmp/$k.txt" "$mdi" batch --no-progress -t 1 $o $A --index "$tmp/idx.$tag"
        done
    done
}

echo "== load: $(cut -d' ' -f1-3 /proc/loadavg), CPUs $(nproc); $LINES path lines, $((LINES / 20)) stacks of 20"
one build "$build"
if [ -n "$base" ]; then
    one base "$base"
    echo "== build / base (instructions), same output"
    for k in "path text" "path json" "stacks text" "stacks json" "shell types -a text" "shell types -a json"; do
        a=$(awk -v k="build $k" '$0 ~ "^"k" [0-9]+$" {print $NF}' "$tmp/ir")
        z=$(awk -v k="base $k" '$0 ~ "^"k" [0-9]+$" {print $NF}' "$tmp/ir")
        same=$(cmp -s "$tmp/out.build $k" "$tmp/out.base $k" && echo same || echo DIFFERENT)
        printf '%-26s %.4f  %s\n' "$k" "$(echo "$a $z" | awk '{print $1 / $2}')" "$same"
    done
fi

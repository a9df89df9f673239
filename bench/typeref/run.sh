#!/bin/bash
# TypeRef-resolution benchmark: open the Mono 4.5 framework (4.5/*.dll and
# 4.5/Facades/*.dll) and resolve every TypeRef, with mdtools (bench_tr),
# libmono (bench_tr_mono: mono_class_from_name) and Mono.Cecil
# (BenchCecil.exe: TypeReference.Resolve). See bench/typeref/README.md.
#
# Usage: bench/typeref/run.sh [builddir]     (default: <srcdir>/build)
# Env:   RUNS=7                 runs per program, interleaved; medians reported
#        MONO_LIB=/usr/lib/mono/4.5
#        CALLGRIND=1            also count the instructions of the timed work
#                               (whole_run()) of bench_tr and bench_tr_mono
#                               with valgrind --tool=callgrind: stable where
#                               clocks on a shared machine are not
set -eu
export LC_ALL=C
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-$srcdir/build}
RUNS=${RUNS:-7}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
MD=$builddir/bench/typeref/bench_tr
MONO=$builddir/bench/typeref/bench_tr_mono
for p in "$MD" "$MONO"; do
    [ -x "$p" ] || { echo "run.sh: $p not built (make -C $builddir bench/typeref/bench_tr bench/typeref/bench_tr_mono)" >&2; exit 2; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp /usr/lib/mono-cecil/Mono.Cecil.dll "$tmp/"
mcs -nologo -r:"$tmp/Mono.Cecil.dll" -out:"$tmp/BenchCecil.exe" "$srcdir/bench/typeref/BenchCecil.cs"
files=("$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll)

field() { sed -n "s/.* $1 \([0-9.]*\).*/\1/p"; }
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

for i in $(seq "$RUNS"); do
    "$MD" "${files[@]}" >>"$tmp/md.txt"
    "$MONO" "${files[@]}" >>"$tmp/mono.txt" 2>/dev/null
    mono "$tmp/BenchCecil.exe" "${files[@]}" >>"$tmp/cecil.txt"
    /usr/bin/time -f "%e %U %S" "$MD" "${files[@]}" 2>>"$tmp/md.proc" >/dev/null
    /usr/bin/time -f "%e %U %S" "$MONO" "${files[@]}" 2>>"$tmp/mono.proc" >/dev/null
    /usr/bin/time -f "%e %U %S" mono "$tmp/BenchCecil.exe" "${files[@]}" 2>>"$tmp/cecil.proc" >/dev/null
done

for s in md mono cecil; do
    head -1 "$tmp/$s.txt" | sed "s/^/$s: /"
done
md_ms=$(field whole_ms <"$tmp/md.txt" | median)
mono_ms=$(field whole_ms <"$tmp/mono.txt" | median)
cecil_ms=$(field whole_ms <"$tmp/cecil.txt" | median)
md_cpu=$(field cpu_ms <"$tmp/md.txt" | median)
mono_cpu=$(field cpu_ms <"$tmp/mono.txt" | median)
warm=$(field warm_ns <"$tmp/md.txt" | median)
md_p=$(awk '{print $1}' "$tmp/md.proc" | median)
mono_p=$(awk '{print $1}' "$tmp/mono.proc" | median)
cecil_p=$(awk '{print $1}' "$tmp/cecil.proc" | median)
echo
echo "| measure (median of $RUNS) | mdtools | libmono | Cecil | libmono / mdtools | Cecil / mdtools |"
echo "| --- | ---: | ---: | ---: | ---: | ---: |"
awk -v a="$md_ms" -v b="$mono_ms" -v c="$cecil_ms" 'BEGIN {
    printf "| open + resolve all TypeRefs, in-process clock (ms) | %.1f | %.1f | %.1f | %.1fx | %.1fx |\n", a, b, c, b / a, c / a }'
awk -v a="$md_cpu" -v b="$mono_cpu" 'BEGIN {
    printf "| open + resolve all TypeRefs, process CPU time (ms) | %.1f | %.1f | | %.1fx | |\n", a, b, b / a }'
awk -v a="$md_p" -v b="$mono_p" -v c="$cecil_p" 'BEGIN {
    printf "| whole process, wall clock (s) | %.2f | %.2f | %.2f | %.1fx | %.1fx |\n", a, b, c, b / a, c / a }'
echo "| warm cached resolution, mdtools (ns per TypeRef) | $warm | | | | |"
if [ -n "${CALLGRIND:-}" ]; then
    ir() {
        REPEAT=0 valgrind --tool=callgrind --toggle-collect=whole_run \
            --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
    }
    md_ir=$(ir "$MD" "${files[@]}")
    mono_ir=$(ir "$MONO" "${files[@]}")
    awk -v a="$md_ir" -v b="$mono_ir" 'BEGIN {
        printf "| open + resolve all TypeRefs, instructions (callgrind, millions) | %.1f | %.1f | | %.1fx | |\n", a / 1e6, b / 1e6, b / a }'
fi

#!/bin/bash
# The signature benchmark: decode and print every MethodDef and MemberRef
# signature, TypeSpec and MethodSpec of the Mono 4.5 framework with mdtools
# (bench_sig_md, talloc API and -b buffer API), libmono (bench_sig_mono) and
# Mono.Cecil (bench_sig_cecil.exe). See bench/sig/README.md.
#
# Usage: bench/sig/run.sh [builddir]      (default: <srcdir>/build)
# Env:   RUNS=5                 timed runs per program (interleaved)
#        MONO_LIB=/usr/lib/mono/4.5
#        CALLGRIND_CECIL=0      1: also count Cecil's instructions (slow)
#
# Per side: the signature counts must agree (exit 1 if not); wall and CPU
# time are the medians of the programs' own clocks around the timed work
# (mono's runtime init is outside it and shown apart); instructions come
# from one callgrind run, counting only the timed function for the C
# programs (--toggle-collect) and the whole process for Cecil; peak RSS is
# /usr/bin/time's %M, median. Prints a markdown table of ratios.
set -eu
export LC_ALL=C

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-$srcdir/build}
RUNS=${RUNS:-5}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
MD=$builddir/bench/sig/bench_sig_md
MONO=$builddir/bench/sig/bench_sig_mono

for p in "$MD" "$MONO"; do
    [ -x "$p" ] || { echo "run.sh: $p not built (make -C $builddir)" >&2; exit 2; }
done
for t in /usr/bin/time valgrind mcs mono; do
    command -v "$t" >/dev/null || { echo "run.sh: needs $t" >&2; exit 2; }
done
pc=$(dpkg -L libmono-cecil-cil-dev 2>/dev/null | grep '/mono-cecil\.pc$' | head -n 1)
cecil_dir=$(sed -n 's/^prefix=//p' "$pc")$(sed -n 's/^assemblies_dir=\${prefix}//p' "$pc")
[ -f "$cecil_dir/Mono.Cecil.dll" ] || { echo "run.sh: needs libmono-cecil-cil-dev" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mcs -nologo -optimize+ -debug- -r:"$cecil_dir/Mono.Cecil.dll" -out:"$tmp/bench_sig_cecil.exe" \
    "$srcdir/bench/sig/bench_sig_cecil.cs"
# MONO_PATH only for Cecil's side: libmono must resolve the framework's own
# references (one of them is the GAC's newer Mono.Cecil) as usual.

files=("$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll)
size=0
for f in "${files[@]}"; do size=$((size + $(stat -L -c %s "$f"))); done

field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1f", a / b; else print "n/a" }'; }
ms() { awk -v n="$1" 'BEGIN { printf "%.0f", n / 1e6 }'; }
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

sides=(md mdbuf mono cecil)
cmd() {
    case $1 in
    md) echo "$MD" ;;
    mdbuf) echo "$MD -b" ;;
    mono) echo "$MONO" ;;
    cecil) echo "env MONO_PATH=$cecil_dir mono $tmp/bench_sig_cecil.exe" ;;
    esac
}

# warm the page cache, then interleave the timed runs
for s in "${sides[@]}"; do $(cmd "$s") "${files[@]}" >/dev/null 2>&1 || true; done
for ((i = 0; i < RUNS; i++)); do
    for s in "${sides[@]}"; do
        /usr/bin/time -f %M -o "$tmp/$s.rss1" $(cmd "$s") "${files[@]}" >"$tmp/$s.line" \
            2>"$tmp/$s.err" || { echo "run.sh: $s failed" >&2; cat "$tmp/$s.err" >&2; exit 1; }
        grep '^side=' "$tmp/$s.line" >>"$tmp/$s.out"
        tail -n 1 "$tmp/$s.rss1" >>"$tmp/$s.rss"
    done
done
echo "timed runs done" >&2

declare -A R
for s in "${sides[@]}"; do
    R[$s,line]=$(head -n 1 "$tmp/$s.out")
    R[$s,wall]=$(while read -r l; do field wall_ns "$l"; done <"$tmp/$s.out" | median)
    R[$s,cpu]=$(while read -r l; do field cpu_ns "$l"; done <"$tmp/$s.out" | median)
    R[$s,init]=$(while read -r l; do field init_ns "$l"; done <"$tmp/$s.out" | median)
    R[$s,rss]=$(median <"$tmp/$s.rss")
done

# instructions: timed function only for the C programs
ir() {
    local tag=$1 fn=$2; shift 2
    valgrind --tool=callgrind ${fn:+--toggle-collect=$fn} --callgrind-out-file="$tmp/cg.$tag" \
        "$@" >/dev/null 2>"$tmp/cg.$tag.log"
    sed -n 's/.*Collected : *//p' "$tmp/cg.$tag.log"
}
R[md,ir]=$(ir md bench_sig_md_work "$MD" "${files[@]}")
R[mdbuf,ir]=$(ir mdbuf bench_sig_md_work "$MD" -b "${files[@]}")
R[mono,ir]=$(ir mono bench_sig_mono_work "$MONO" "${files[@]}")
if [ "${CALLGRIND_CECIL:-0}" = 1 ]; then
    R[cecil,ir]=$(ir cecil "" env MONO_PATH="$cecil_dir" mono "$tmp/bench_sig_cecil.exe" \
        "${files[@]}")
else
    R[cecil,ir]=
fi
echo "callgrind done" >&2

status=0
for s in md mdbuf cecil; do
    for k in files methoddefs memberrefs typespecs methodspecs; do
        a=$(field "$k" "${R[$s,line]}") b=$(field "$k" "${R[mono,line]}")
        [ "$a" = "$b" ] || { echo "MISMATCH $s $k: $a vs libmono $b"; status=1; }
    done
done

echo "Machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
     "$(uname -sr), libmono $(pkg-config --modversion mono-2 2>/dev/null || echo '?'), Cecil 0.9.5;" \
     "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "Input: ${#files[@]} files ($MONO_LIB/*.dll + Facades/*.dll, $(thousands "$size") bytes)," \
     "$(thousands "$(field sigs "${R[mono,line]}")") signatures" \
     "($(field methoddefs "${R[mono,line]}") MethodDef, $(field memberrefs "${R[mono,line]}") MemberRef," \
     "$(field typespecs "${R[mono,line]}") TypeSpec, $(field methodspecs "${R[mono,line]}") MethodSpec);" \
     "errors: mdtools $(field errors "${R[md,line]}"), libmono $(field errors "${R[mono,line]}")," \
     "Cecil $(field errors "${R[cecil,line]}")"
echo
echo "| metric | mdtools (buffers) | mdtools (talloc) | libmono | Cecil | libmono / mdtools (buffers) | libmono / mdtools (talloc) | Cecil / mdtools (buffers) |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
row() {
    local name=$1 key=$2 fmt=$3 a b c d
    a=${R[mdbuf,$key]} b=${R[md,$key]} c=${R[mono,$key]} d=${R[cecil,$key]}
    echo "| $name | $($fmt "$a") | $($fmt "$b") | $($fmt "$c") | $([ -n "$d" ] && $fmt "$d" || echo n/a) |" \
         "$(ratio "$c" "$a") | $(ratio "$c" "$b") | $([ -n "$d" ] && ratio "$d" "$a" || echo n/a) |"
}
row "wall ms, median of $RUNS" wall ms
row "CPU ms, median of $RUNS" cpu ms
row "instructions (timed work; Cecil: process)" ir thousands
row "peak RSS KiB, median" rss thousands
echo
echo "libmono runtime init (mono_jit_init, not timed): $(ms "${R[mono,init]}") ms." \
     "Printed text: mdtools $(thousands "$(field bytes "${R[md,line]}")") bytes," \
     "libmono $(thousands "$(field bytes "${R[mono,line]}")"), Cecil $(thousands "$(field bytes "${R[cecil,line]}")")."
goal=$(awk -v a="${R[mono,wall]}" -v b="${R[mdbuf,wall]}" 'BEGIN { print (a >= 5 * b) ? "met" : "MISSED" }')
echo "Goal: >= 5x less wall time than libmono (buffer API): $goal" \
     "($(ratio "${R[mono,wall]}" "${R[mdbuf,wall]}")x)."
exit $status

#!/bin/bash
# The metadata-reading benchmark: mdtools (bench_md) against libmono
# (bench_mono), same work, same run. See bench/README.md.
#
# Usage: bench/run.sh [builddir]      (default: <srcdir>/build)
# Env:   RUNS=7   timed runs per program and input (interleaved)
#        MONO_LIB=/usr/lib/mono/4.5   where the input assemblies live
#
# For each input (A: mscorlib.dll; B: every 4.5/*.dll and 4.5/Facades/*.dll)
# and each variant (full: row at a time, the per-cell API; column: column at
# a time; cells: one mdt_row_cells call per row; rows: one mdt_rows_cells
# call per run of rows; raw: raw values only; open: open each image and
# read three cells; libmono's full walk stands against column, cells and
# rows):
#  - checks that both sides report the same rows, cells, string, blob and
#    GUID bytes and raw sums (exits 1 if not);
#  - wall time: median over RUNS runs of the in-process clock around
#    open + walk (mono's init is timed apart); CPU time likewise, from the
#    process CPU clock (steadier than wall time when the machine is busy);
#  - instructions: one callgrind run per program, dumping a profile part on
#    entry to and exit from the timed function (bench_md_work, or
#    bench_md_work_rows for rows / bench_mono_work): "timed" is the part
#    between, "process" the total;
#  - peak RSS: /usr/bin/time -f %M of each timed run, median.
# Then prints markdown tables with the ratio libmono / mdtools, and the goals
# of issue #19 as mdtools / libmono.
set -eu
export LC_ALL=C

srcdir=$(cd "$(dirname "$0")/.." && pwd)
builddir=${1:-$srcdir/build}
RUNS=${RUNS:-7}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
MD=$builddir/bench/bench_md
MONO=$builddir/bench/bench_mono

for p in "$MD" "$MONO"; do
    [ -x "$p" ] || { echo "run.sh: $p not built (make -C $builddir)" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "run.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "run.sh: needs valgrind" >&2; exit 2; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

inputs_A=("$MONO_LIB/mscorlib.dll")
inputs_B=("$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll)

# field KEY LINE: the value of KEY=... in a report line.
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }'; }
ms() { awk -v n="$1" 'BEGIN { printf "%.2f", n / 1e6 }'; }
thousands() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

# run TAG PROG ARGS...: one timed run, report line to $tmp/TAG.out, RSS to $tmp/TAG.rss
run() {
    local tag=$1; shift
    /usr/bin/time -f %M -o "$tmp/$tag.rss1" "$@" >"$tmp/$tag.line" 2>"$tmp/$tag.err" || {
        echo "run.sh: $* failed:" >&2; cat "$tmp/$tag.err" >&2; exit 1; }
    grep "^side=" "$tmp/$tag.line" >>"$tmp/$tag.out" || { echo "run.sh: no report from $*" >&2; exit 1; }
    tail -n 1 "$tmp/$tag.rss1" >>"$tmp/$tag.rss"
}

# callgrind TAG FUNC PROG ARGS...: prints "process_Ir timed_Ir loop_Ir", where
# loop_Ir is the self cost of FUNC in the benchmark's own source file (its
# loop, walk inlined); the library's inline readers, which callgrind books
# under <mdtools/tables.h>, count as library.
callgrind() {
    local tag=$1 fn=$2; shift 2
    valgrind --tool=callgrind --dump-before="$fn" --dump-after="$fn" \
        --callgrind-out-file="$tmp/cg.$tag" "$@" >/dev/null 2>"$tmp/cg.$tag.log" || {
        echo "run.sh: callgrind $* failed:" >&2; tail "$tmp/cg.$tag.log" >&2; exit 1; }
    local total timed loop
    total=$(sed -n 's/.*Collected : *//p' "$tmp/cg.$tag.log")
    timed=$(sed -n 's/^summary: *//p' "$tmp/cg.$tag.2")
    loop=$(callgrind_annotate --auto=no --threshold=100 "$tmp/cg.$tag.2" 2>/dev/null |
        grep -E "^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]*/bench_[a-z]+\.c:$fn( |\$)" |
        awk '{ n = $1; gsub(",", "", n); sum += n } END { print sum + 0 }')
    echo "$total $timed $loop"
}

declare -A R # results: R[input,side,variant,metric]

bench_input() {
    local in=$1; shift
    local files=("$@") size=0 f
    for f in "${files[@]}"; do size=$((size + $(stat -L -c %s "$f"))); done
    R[$in,size]=$size
    R[$in,nfiles]=${#files[@]}
    echo "== input $in: ${#files[@]} file(s), $size bytes" >&2

    local variant flag mflag mvariant
    # column, cells, rows: mdtools' column-at-a-time, whole-row and row-run
    # APIs against libmono's full walk (libmono has none of them; decoding a
    # row is already its fastest path). open: each image opened and three
    # cells read.
    for variant in full column cells rows raw open; do
        local fn=bench_md_work
        case $variant in
            full) flag= mflag= mvariant=full ;;
            column) flag=-c mflag= mvariant=full ;;
            cells) flag=-w mflag= mvariant=full ;;
            rows) flag=-m mflag= mvariant=full fn=bench_md_work_rows ;;
            raw) flag=-r mflag=-r mvariant=raw ;;
            open) flag=-o mflag=-o mvariant=open ;;
        esac
        # warm the page cache, then interleave the timed runs
        "$MD" $flag "${files[@]}" >/dev/null 2>&1 || true
        "$MONO" $mflag "${files[@]}" >/dev/null 2>&1 || true
        local i
        for ((i = 0; i < RUNS; i++)); do
            run "$in.md.$variant" "$MD" $flag "${files[@]}"
            run "$in.mono.$variant" "$MONO" $mflag "${files[@]}"
        done
        local side
        for side in md mono; do
            local out=$tmp/$in.$side.$variant.out
            R[$in,$side,$variant,line]=$(head -n 1 "$out")
            R[$in,$side,$variant,wall]=$(while read -r l; do field work_ns "$l"; done <"$out" | median)
            R[$in,$side,$variant,cpu]=$(while read -r l; do field cpu_ns "$l"; done <"$out" | median)
            R[$in,$side,$variant,init]=$(while read -r l; do field init_ns "$l"; done <"$out" | median)
            R[$in,$side,$variant,rss]=$(median <"$tmp/$in.$side.$variant.rss")
        done
        echo "   $variant: timed runs done" >&2
        local ir
        ir=$(callgrind "$in.md.$variant" "$fn" "$MD" $flag "${files[@]}")
        [ -n "$ir" ] || exit 1
        read -r R[$in,md,$variant,irp] R[$in,md,$variant,irt] R[$in,md,$variant,irl] <<<"$ir"
        # libmono's instructions are the same for the variants that share
        # its full walk: counted once.
        if [ -z "${R[$in,mono,$mvariant,irt]:-}" ]; then
            ir=$(callgrind "$in.mono.$mvariant" bench_mono_work "$MONO" $mflag "${files[@]}")
            [ -n "$ir" ] || exit 1
            read -r R[$in,mono,$mvariant,irp] R[$in,mono,$mvariant,irt] R[$in,mono,$mvariant,irl] <<<"$ir"
        fi
        R[$in,mono,$variant,irp]=${R[$in,mono,$mvariant,irp]}
        R[$in,mono,$variant,irt]=${R[$in,mono,$mvariant,irt]}
        R[$in,mono,$variant,irl]=${R[$in,mono,$mvariant,irl]}
        echo "   $variant: callgrind done" >&2
    done
}

# check IN VARIANT KEYS...: both sides must report the same values.
status=0
check() {
    local in=$1 variant=$2; shift 2
    local k a b bad=
    for k in "$@"; do
        a=$(field "$k" "${R[$in,md,$variant,line]}")
        b=$(field "$k" "${R[$in,mono,$variant,line]}")
        [ "$a" = "$b" ] || bad="$bad $k(mdtools=$a libmono=$b)"
    done
    a=$(field errors "${R[$in,md,$variant,line]}")
    [ "$a" = 0 ] || bad="$bad errors(mdtools=$a)"
    if [ -n "$bad" ]; then
        echo "- $in $variant: **MISMATCH**:$bad"
        status=1
    else
        local summary=
        for k in "$@"; do summary="$summary $k=$(field "$k" "${R[$in,md,$variant,line]}")"; done
        echo "- $in $variant: agree:$summary"
    fi
}

start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
bench_input A "${inputs_A[@]}"
bench_input B "${inputs_B[@]}"

echo
echo "Machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
     "$(uname -sr), libmono $(pkg-config --modversion mono-2 2>/dev/null || echo '?');" \
     "load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end"
echo
echo "Inputs: A = mscorlib.dll (${R[A,nfiles]} file, ${R[A,size]} bytes);" \
     "B = ${R[B,nfiles]} files ($MONO_LIB/*.dll + Facades/*.dll, ${R[B,size]} bytes)"
echo
echo "| input | metric | mdtools | libmono | libmono / mdtools |"
echo "|---|---|---:|---:|---:|"
for in in A B; do
    for variant in full column cells rows raw open; do
        case $variant in
            full) v="row at a time" ;; column) v="column at a time" ;;
            cells) v="whole rows, mdt_row_cells" ;; rows) v="runs of rows, mdt_rows_cells" ;;
            raw) v="raw only" ;;
            *) v="open + 3 cells" ;;
        esac
        a=${R[$in,md,$variant,wall]} b=${R[$in,mono,$variant,wall]}
        echo "| $in | wall ms, median of $RUNS ($v) | $(ms "$a") | $(ms "$b") | $(ratio "$b" "$a") |"
        a=${R[$in,md,$variant,cpu]} b=${R[$in,mono,$variant,cpu]}
        echo "| $in | CPU ms, median of $RUNS ($v) | $(ms "$a") | $(ms "$b") | $(ratio "$b" "$a") |"
        a=${R[$in,md,$variant,irt]} b=${R[$in,mono,$variant,irt]}
        echo "| $in | Ir, timed work ($v) | $(thousands "$a") | $(thousands "$b") | $(ratio "$b" "$a") |"
        a=$((R[$in,md,$variant,irt] - R[$in,md,$variant,irl]))
        b=$((R[$in,mono,$variant,irt] - R[$in,mono,$variant,irl]))
        echo "| $in | Ir, timed, outside the bench loop ($v) | $(thousands "$a") | $(thousands "$b") | $(ratio "$b" "$a") |"
        a=${R[$in,md,$variant,irp]} b=${R[$in,mono,$variant,irp]}
        echo "| $in | Ir, whole process ($v) | $(thousands "$a") | $(thousands "$b") | $(ratio "$b" "$a") |"
        a=${R[$in,md,$variant,rss]} b=${R[$in,mono,$variant,rss]}
        echo "| $in | peak RSS KiB ($v) | $(thousands "$a") | $(thousands "$b") | $(ratio "$b" "$a") |"
    done
    echo "| $in | libmono init ms (untimed) | - | $(ms "${R[$in,mono,full,init]}") | |"
    echo "| $in | input bytes | $(thousands "${R[$in,size]}") | | |"
done

# goal IN VARIANT MAX_RATIO [MAX_IR]: mdtools' timed instructions as a
# fraction of libmono's full walk (at most MAX_RATIO) and, when given, at
# most MAX_IR instructions (issue #19 states the column API's goals so).
goal() {
    local in=$1 variant=$2 max=$3 cap=${4:-} md=${R[$1,md,$2,irt]} mono=${R[$1,mono,$2,irt]} r ok
    r=$(ratio "$md" "$mono")
    ok=$(awk -v r="$r" -v m="$max" 'BEGIN { print (r <= m) ? "met" : "MISSED" }')
    if [ -n "$cap" ]; then
        [ "$md" -le "$cap" ] && ok="$ok; <= $(thousands "$cap"): met" || ok="$ok; <= $(thousands "$cap"): MISSED"
    fi
    echo "- $in, $variant: $(thousands "$md") instructions, ${r}x libmono's $(thousands "$mono") (goal <= ${max}x): $ok"
}

echo
echo "Goals of issue #19 (instructions of the timed work; mdtools / libmono, lower is better):"
echo
for in in A B; do
    goal "$in" full 0.75
    goal "$in" cells 0.5
    goal "$in" rows 0.5
done
goal A column 1 8000000
goal B column 1 95000000

echo
echo "Earlier goals (mdtools): >= 2.5x fewer timed instructions and less wall time than libmono;" \
     "peak RSS <= input bytes + 10%. Judged for each mdtools API against libmono's full walk."
echo
for in in A B; do
    for variant in column full cells rows; do
        irr=$(ratio "${R[$in,mono,full,irt]}" "${R[$in,md,$variant,irt]}")
        ir_ok=$(awk -v r="$irr" 'BEGIN { print (r >= 2.5) ? "met" : "MISSED" }')
        wall_ok=$( [ "${R[$in,md,$variant,wall]}" -lt "${R[$in,mono,full,wall]}" ] && echo met || echo MISSED)
        limit=$(( R[$in,size] * 11 / 10 / 1024 ))
        rss_ok=$( [ "${R[$in,md,$variant,rss]}" -le "$limit" ] && echo met || echo MISSED)
        label=$variant; [ "$variant" = full ] && label=row
        echo "- $in, $label: instructions ${irr}x (goal 2.5x): $ir_ok;" \
             "wall $(ms "${R[$in,md,$variant,wall]}") ms vs $(ms "${R[$in,mono,full,wall]}") ms: $wall_ok;" \
             "RSS ${R[$in,md,$variant,rss]} KiB vs limit $limit KiB: $rss_ok"
    done
done

echo
echo "Agreement (mdtools vs libmono):"
for in in A B; do
    check "$in" full files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other
    check "$in" column files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other
    check "$in" cells files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other
    check "$in" rows files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other
    check "$in" raw files rows cells raw_all
    check "$in" open files cells str_bytes
done
echo
echo "Run took $(( $(date +%s) - start )) s."
exit $status

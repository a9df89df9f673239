#!/bin/bash
# Instructions (callgrind) of the mdtools side of every benchmark, for two
# builds of the tree in the same run: a change against the version before
# it (bench/README.md, "Issue 18: layering and API, before and after").
# Each build runs its own benchmark programs, compiled from its own
# sources, on the same inputs; callgrind counts are exact and repeat, so
# the ratios hold however busy the machine is. The peers (libmono, Cecil,
# monodis) are not run: each folder's run.sh compares against them.
#
# Usage: bench/compare.sh NEW_BUILDDIR BASE_BUILDDIR
# Env:   MONO_LIB=/usr/lib/mono/4.5   the framework (4.5/*.dll + Facades/*.dll)
#        LINES=200000                 lines of the batch inputs (bench/batch/gen)
#        IDMAP_N=100000               classes in the idmap run (ranges N/10)
#        KEEP=DIR                     keep the callgrind profiles in DIR
# Prints a markdown table: what, base Ir, new Ir, new / base. A row the
# base cannot run (a call it does not have) shows "-".
set -eu
export LC_ALL=C

[ $# -eq 2 ] || { echo "usage: $0 NEW_BUILDDIR BASE_BUILDDIR" >&2; exit 2; }
NEW=$(cd "$1" && pwd)
BASE=$(cd "$2" && pwd)
srcdir=$(cd "$(dirname "$0")/.." && pwd)
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
LINES=${LINES:-200000}
IDMAP_N=${IDMAP_N:-100000}
command -v valgrind >/dev/null || { echo "compare.sh: needs valgrind" >&2; exit 2; }
ls "$MONO_LIB"/mscorlib.dll >/dev/null || exit 2
if [ -n "${KEEP:-}" ]; then
    mkdir -p "$KEEP"
    tmp=$(cd "$KEEP" && pwd)
else
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT INT TERM
fi

A=("$MONO_LIB/mscorlib.dll")
B=("$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll)

# A program itself, not libtool's wrapper script (which valgrind would
# count too); mdinspect and bench_idmap have one, the others are linked
# -no-install.
prog() { if [ -x "$1/$(dirname "$2")/.libs/$(basename "$2")" ]; then echo "$1/$(dirname "$2")/.libs/$(basename "$2")"; else echo "$1/$2"; fi; }
mdi() { prog "$1" mdinspect/mdinspect; }

# cg TAG BUILD ARGS...: callgrind of a command under BUILD's library; the
# profile is $tmp/TAG, its output $tmp/TAG.stdout; prints the total ("-"
# if the command failed).
cg() {
    local tag=$1 b=$2; shift 2
    LD_LIBRARY_PATH=$b/libmdtools/.libs valgrind --tool=callgrind \
        --callgrind-out-file="$tmp/$tag" "$@" >"$tmp/$tag.stdout" 2>"$tmp/$tag.log" </dev/null || {
        echo "-"
        return 0
    }
    sed -n 's/.*Collected : *//p' "$tmp/$tag.log"
}

# timed TAG FN: "TIMED LIBRARY": the Ir between entry to and exit from FN
# (run.sh's --dump-before/--dump-after: the profile part .2), and the same
# less the self cost of FN in the bench's own source (its loop, with the
# walk inlined), as run.sh's "outside the bench loop".
timed() {
    local f=$tmp/$1.2 t loop
    [ -f "$f" ] || { echo "- -"; return; }
    t=$(sed -n 's/^summary: *//p' "$f")
    loop=$(callgrind_annotate --auto=no --threshold=100 "$f" 2>/dev/null |
        grep -E "^ *[0-9,]+ +\( *[0-9.]+%\) +[^ ]*/bench_[a-z]+\.c:$2( |\$)" |
        awk '{ n = $1; gsub(",", "", n); s += n } END { print s + 0 }')
    echo "$t $((t - loop))"
}

# percall FILE FUNC: inclusive Ir of FUNC per call, one decimal: the
# block of FUNC that has callers (their (Nx) are the calls). Code inlined
# into FUNC from a header is also listed as header:FUNC, with no callers:
# a part of that block's cost, not counted again.
percall() {
    callgrind_annotate --inclusive=yes --tree=caller --threshold=100 "$1" 2>/dev/null |
        awk -v fn="$2" '
            /^ *$/ { c = 0; next }
            /^ *[0-9,]+ +\(.*\) +< / {
                if (match($0, /\([0-9,]+x\)/)) { x = substr($0, RSTART + 1, RLENGTH - 3); gsub(",", "", x); c += x }
                next
            }
            /\* / && c && ($0 ~ ":" fn " " || $0 ~ ":" fn "$") {
                n = $1; gsub(",", "", n); incl += n; calls += c
            }
            END { if (calls) printf "%.1f\n", incl / calls; else print "-" }'
}

rows=$tmp/rows
: >"$rows"
row() { echo "$1|$2|$3" >>"$rows"; } # what|base|new

for side in base new; do
    b=$BASE; [ $side = new ] && b=$NEW
    echo "== $side: $b" >&2
    # bench_md: each variant over A and B
    for in in A B; do
        if [ $in = A ]; then files=("${A[@]}"); else files=("${B[@]}"); fi
        for v in full column cells rows raw open; do
            fn=bench_md_work flag=
            case $v in
                column) flag=-c ;;
                cells) flag=-w ;;
                rows) flag=-m fn=bench_md_work_rows ;;
                raw) flag=-r ;;
                open) flag=-o ;;
            esac
            tag=md.$in.$v.$side
            cg "$tag" "$b" --dump-before=$fn --dump-after=$fn "$b/bench/bench_md" $flag "${files[@]}" >/dev/null
            # an unknown option prints usage and no report: the base has no such call
            grep -q '^side=' "$tmp/$tag.stdout" 2>/dev/null || rm -f "$tmp/$tag.2"
            read -r t l <<<"$(timed "$tag" $fn)"
            echo "$t $l" >"$tmp/$tag.ir"
        done
    done
    echo "   bench_md done" >&2
    # bench_open: one round of each way after the untimed one (-n 1: four
    # rounds in all, two read, two mapped), counted inside one_round
    cg open.$side "$b" --toggle-collect=one_round "$b/bench/bench_open" -n 1 "${B[@]}" >"$tmp/open.$side.ir"
    cg openw.$side "$b" --toggle-collect=one_round "$b/bench/bench_open" -w -n 1 "${B[@]}" >"$tmp/openw.$side.ir"
    # typeref: open + resolve every TypeRef (whole_run); warm: the process
    # with REPEAT=20 less the one with REPEAT=0, per resolution
    REPEAT=0 cg tr.$side "$b" --toggle-collect=whole_run "$b/bench/typeref/bench_tr" "${B[@]}" >"$tmp/tr.$side.ir"
    p0=$(REPEAT=0 cg tr0.$side "$b" "$b/bench/typeref/bench_tr" "${B[@]}")
    p20=$(REPEAT=20 cg tr20.$side "$b" "$b/bench/typeref/bench_tr" "${B[@]}")
    nrefs=$(sed -n 's/.* typerefs \([0-9]*\) .*/\1/p' "$tmp/tr20.$side.stdout")
    awk -v a="$p0" -v b="$p20" -v n="$nrefs" 'BEGIN { printf "%.1f\n", (b - a) / (20 * n) }' >"$tmp/trw.$side.ir"
    echo "   typeref done" >&2
    # sig: the talloc and the buffer API
    cg sig.$side "$b" --toggle-collect=bench_sig_md_work "$b/bench/sig/bench_sig_md" "${B[@]}" >"$tmp/sig.$side.ir"
    cg sigb.$side "$b" --toggle-collect=bench_sig_md_work "$b/bench/sig/bench_sig_md" -b "${B[@]}" >"$tmp/sigb.$side.ir"
    echo "   sig done" >&2
    # idmap: latency and throughput phases, no concurrent phase (runs 0)
    cg idmap.$side "$b" "$(prog "$b" bench/idmap/bench_idmap)" "$IDMAP_N" $((IDMAP_N / 10)) 0 0 >/dev/null
    for f in mdt_idmap_class_load mdt_idmap_class_lookup mdt_idmap_class_find mdt_idmap_ip_lookup; do
        percall "$tmp/idmap.$side" $f >"$tmp/idmap.$f.$side.ir"
    done
    echo "   idmap done" >&2
    # batch: the inputs of bench/batch/run.sh (generated once, by the new
    # build's gen, so both sides read the same lines), one thread
    if [ $side = base ]; then
        LD_LIBRARY_PATH=$NEW/libmdtools/.libs "$NEW/bench/batch/gen" path "$LINES" "${B[@]}" >"$tmp/path.txt" 2>/dev/null
        LD_LIBRARY_PATH=$NEW/libmdtools/.libs "$NEW/bench/batch/gen" mvid "$LINES" "${B[@]}" >"$tmp/mvid.txt" 2>/dev/null
        LD_LIBRARY_PATH=$NEW/libmdtools/.libs "$NEW/bench/batch/gen" stacks $((LINES / 20)) 20 "${B[@]}" >"$tmp/stacks.txt" 2>/dev/null
    fi
    m=$(mdi "$b")
    fw="-a $MONO_LIB -a $MONO_LIB/Facades"
    LD_LIBRARY_PATH=$b/libmdtools/.libs "$m" batch $fw --index "$tmp/idx.$side" </dev/null >/dev/null 2>&1 || true
    for k in path mvid stacks; do
        a=; [ $k = path ] || a="$fw --index $tmp/idx.$side"
        LD_LIBRARY_PATH=$b/libmdtools/.libs valgrind --tool=callgrind --callgrind-out-file="$tmp/batch.$k.$side" \
            "$m" batch --no-progress -t 1 $a <"$tmp/$k.txt" >"$tmp/batch.$k.$side.out" 2>"$tmp/batch.$k.$side.log" || true
        sed -n 's/.*Collected : *//p' "$tmp/batch.$k.$side.log" >"$tmp/batch.$k.$side.ir"
    done
    echo "   batch done" >&2
    # mdinspect: the default command on the sample, and the long commands
    # over the framework as one set (bench/shell/speed.sh's)
    cg sh.sample.$side "$b" "$m" "$srcdir/data/sample/Hello.exe" >"$tmp/sh.sample.$side.ir"
    i=0
    for c in "types -a" "find *" "memberrefs --all" "validate -a"; do
        cg sh.$i.$side "$b" "$m" -c "open $MONO_LIB/*.dll $MONO_LIB/Facades/*.dll; $c" >"$tmp/sh.$i.$side.ir"
        i=$((i + 1))
    done
    echo "   mdinspect done" >&2
done

# Same answers: the outputs of both builds agree where they must.
for t in md.A.full md.B.full md.B.column md.B.cells; do
    cmp -s <(cut -d' ' -f1-9 "$tmp/$t.base.stdout") <(cut -d' ' -f1-9 "$tmp/$t.new.stdout") ||
        echo "compare.sh: $t: the two builds report different sums" >&2
done
for k in path mvid stacks; do
    cmp -s "$tmp/batch.$k.base.out" "$tmp/batch.$k.new.out" ||
        echo "compare.sh: batch $k: the two builds print different output" >&2
done

get() { cat "$tmp/$1.$2.ir"; }
col() { cut -d' ' -f"$1" <<<"$2"; }
for in in A B; do
    for v in full column cells rows raw open; do
        bt=$(get md.$in.$v base) nt=$(get md.$in.$v new)
        row "bench_md $in $v, timed" "$(col 1 "$bt")" "$(col 1 "$nt")"
        row "bench_md $in $v, timed library" "$(col 2 "$bt")" "$(col 2 "$nt")"
    done
done
row "bench_open -n 1, framework (one_round)" "$(get open base)" "$(get open new)"
row "bench_open -w -n 1, framework (one_round)" "$(get openw base)" "$(get openw new)"
row "typeref: open + resolve all (whole_run)" "$(get tr base)" "$(get tr new)"
row "typeref: warm resolution, per TypeRef" "$(get trw base)" "$(get trw new)"
row "sig: talloc API (bench_sig_md_work)" "$(get sig base)" "$(get sig new)"
row "sig: buffer API (-b)" "$(get sigb base)" "$(get sigb new)"
for f in mdt_idmap_class_load mdt_idmap_class_lookup mdt_idmap_class_find mdt_idmap_ip_lookup; do
    row "idmap: $f, per call" "$(get idmap.$f base)" "$(get idmap.$f new)"
done
for k in path mvid stacks; do
    n="$LINES lines"; [ $k = stacks ] && n="$((LINES / 20)) records of 20 frames"
    row "batch -t 1: $k, $n (process)" "$(get batch.$k base)" "$(get batch.$k new)"
done
row "mdinspect Hello.exe (process)" "$(get sh.sample base)" "$(get sh.sample new)"
i=0
for c in "types -a" "find *" "memberrefs --all" "validate -a"; do
    row "mdinspect open framework; $c (process)" "$(get sh.$i base)" "$(get sh.$i new)"
    i=$((i + 1))
done

echo "| what | base Ir | new Ir | new / base |"
echo "| --- | ---: | ---: | ---: |"
while IFS='|' read -r what b n; do
    r=$(awk -v a="$b" -v c="$n" 'BEGIN { if (a + 0 > 0 && c + 0 > 0) printf "%.4f", c / a; else print "-" }')
    echo "| $what | $b | $n | $r |"
done <"$rows"

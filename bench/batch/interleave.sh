#!/bin/sh
# bench/batch/interleave.sh: `mdinspect batch` (-t 1 and its default
# threads) and the libmono peer on the same 10^6 `PATH TOKEN` lines,
# taking turns round by round (issue 28: run.sh measures each program's
# RUNS runs in a row, which a load that changes between them skews).
#
#   bench/batch/interleave.sh [BUILDDIR]      ROUNDS=7 LINES=1000000 EXTRA=0
#
# EXTRA=1 adds the runs that could have been taken for "mdinspect batch"
# where a lower ratio was reported: -t 1 with --cache-mb 16, and MVID lines
# with the index built afresh in every run (-a the framework, --index a
# file removed before the run), with the peer on the same MVID lines.
#
# Per round and program: user and system CPU of the whole process
# (/usr/bin/time), and the peer's own clocks from its stderr (init_ms: its
# mono_jit_init, outside its timed work; work_ms: wall of whole_run()).
# Prints every round, then per program the median and min-max of CPU
# (user+sys), and the ratios of the medians: libmono / mdinspect.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$src/build}
ROUNDS=${ROUNDS:-7}
LINES=${LINES:-1000000}
mdi=$build/mdinspect/.libs/mdinspect
[ -x "$mdi" ] || mdi=$build/mdinspect/mdinspect
peer=$build/bench/batch/batch_mono
gen=$build/bench/batch/gen
fw=/usr/lib/mono/4.5
for p in "$mdi" "$peer" "$gen" /usr/bin/time; do
    [ -x "$p" ] || { echo "interleave.sh: $p is missing" >&2; exit 1; }
done
LD_LIBRARY_PATH=$build/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export LD_LIBRARY_PATH
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
files=$(ls "$fw"/*.dll "$fw"/Facades/*.dll)
"$gen" path "$LINES" $files >"$tmp/path.txt" 2>/dev/null
sides="t1 tdef mono"
if [ "${EXTRA:-0}" = 1 ]; then
    "$gen" mvid "$LINES" $files >"$tmp/mvid.txt" 2>/dev/null
    sides="$sides small mvidcold monomvid"
fi
# A warm-up of each: the page cache holds the framework and the binaries.
"$mdi" batch --no-progress -t 1 <"$tmp/path.txt" >/dev/null 2>&1 || true
"$peer" <"$tmp/path.txt" >/dev/null 2>&1 || true
echo "== load: $(cut -d' ' -f1-3 /proc/loadavg), CPUs $(nproc), $LINES lines, $ROUNDS rounds"
r=1
while [ $r -le "$ROUNDS" ]; do
    for side in $sides; do
        in=$tmp/path.txt
        case $side in
        t1) set -- "$mdi" batch --no-progress -t 1 ;;
        tdef) set -- "$mdi" batch --no-progress ;;
        mono) set -- "$peer" ;;
        small) set -- "$mdi" batch --no-progress -t 1 --cache-mb 16 ;;
        mvidcold)
            rm -f "$tmp/idx"
            in=$tmp/mvid.txt
            set -- "$mdi" batch --no-progress -t 1 -a "$fw" -a "$fw/Facades" --index "$tmp/idx" ;;
        monomvid) in=$tmp/mvid.txt; set -- "$peer" "$fw" ;;
        esac
        /usr/bin/time -f "%U %S %e" -o "$tmp/t" "$@" <"$in" >"$tmp/out.$side" \
            2>"$tmp/err.$side" || true
        t=$(grep -v '^Command' "$tmp/t")
        extra=
        case $side in mono*) extra=$(grep -o 'init_ms [0-9.]* work_ms [0-9.]*' "$tmp/err.$side" || true) ;; esac
        echo "round $r $side $t $extra" | tee -a "$tmp/all"
    done
    r=$((r + 1))
done
cmp -s "$tmp/out.t1" "$tmp/out.tdef" || echo "interleave.sh: outputs of -t 1 and default threads differ" >&2
stat() { # stat SIDE FIELD-EXPR -> median min max
    awk -v s="$1" '$3 == s {print '"$2"'}' "$tmp/all" | sort -n |
        awk '{a[NR]=$1} END {printf "%.3f %.3f %.3f", a[int((NR+1)/2)], a[1], a[NR]}'
}
for side in $sides; do
    set -- $(stat $side '$4 + $5')
    u=$(stat $side '$4' | cut -d' ' -f1); s=$(stat $side '$5' | cut -d' ' -f1)
    w=$(stat $side '$6' | cut -d' ' -f1)
    printf '%-5s cpu %s s (%s-%s)  user %s  sys %s  wall %s\n' $side "$1" "$2" "$3" "$u" "$s" "$w"
    eval "cpu_$side=$1"
done
mi=$(stat mono '$8' | cut -d' ' -f1); mw=$(stat mono '$10' | cut -d' ' -f1)
echo "mono  init_ms median $mi  work_ms (wall of whole_run) median $mw"
awk -v m="$cpu_mono" -v a="$cpu_t1" -v b="$cpu_tdef" 'BEGIN {
    printf "ratio libmono / mdinspect, CPU medians: -t 1 %.2fx, default threads %.2fx\n", m / a, m / b }'
if [ "${EXTRA:-0}" = 1 ]; then
    awk -v m="$cpu_mono" -v a="$cpu_small" -v mm="$cpu_monomvid" -v c="$cpu_mvidcold" 'BEGIN {
        printf "ratio libmono / mdinspect, CPU medians: --cache-mb 16 %.2fx, MVID lines with the index built %.2fx\n", m / a, mm / c }'
fi

#!/bin/bash
# Two builds' libmdtools side by side on recorded traces (issue 24): the
# same bench_replay (from NEW) under each build's library. Per trace:
# callgrind's instructions per call of the load calls (inclusive, counted
# inside run_calls only) and in all; then the CPU time of the whole replay,
# RUNS runs per build taking turns (the order swapped every run), median
# [min-max] and the median of the per-pair ratios new/base.
# Usage: replay.sh BASE_BUILD NEW_BUILD trace...   (RUNS=21 by default)
set -eu
base=$1 new=$2
shift 2
runs=${RUNS:-21}
prog=$new/bench/idmap/.libs/bench_replay
[ -x "$prog" ] || prog=$new/bench/idmap/bench_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# percall FILE FUNC: inclusive Ir of FUNC per call (as bench/compare.sh).
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

run() { # BUILD trace: one replay's CPU milliseconds
    LD_LIBRARY_PATH=$1/libmdtools/.libs "$prog" "$2" | sed -n 's/^cpu_ms //p'
}

for trace in "$@"; do
    echo "== $(basename "$trace"): $(LD_LIBRARY_PATH=$new/libmdtools/.libs "$prog" "$trace" | head -1)"
    for side in base new; do
        b=$base; [ $side = new ] && b=$new
        LD_LIBRARY_PATH=$b/libmdtools/.libs valgrind --tool=callgrind --toggle-collect=run_calls \
            --callgrind-out-file="$tmp/cg.$side" "$prog" "$trace" >/dev/null 2>"$tmp/log.$side"
        sed -n 's/.*Collected : *//p' "$tmp/log.$side" >"$tmp/total.$side"
        for f in mdt_idmap_class_load mdt_idmap_function_load mdt_idmap_code_add \
            mdt_idmap_module_load; do
            percall "$tmp/cg.$side" $f >"$tmp/$f.$side"
        done
    done
    printf '%-28s %12s %12s %8s\n' "Ir" base new new/base
    for f in mdt_idmap_class_load mdt_idmap_function_load mdt_idmap_code_add \
        mdt_idmap_module_load total; do
        awk -v f=$f -v b="$(cat "$tmp/$f.base")" -v n="$(cat "$tmp/$f.new")" \
            'BEGIN { printf "%-28s %12s %12s %8s\n", (f == "total" ? "all calls" : f " per call"), b, n, (b + 0 > 0 ? sprintf("%.3f", n / b) : "-") }'
    done
    : >"$tmp/cpu"
    for i in $(seq "$runs"); do
        if [ $((i % 2)) = 1 ]; then
            b=$(run "$base" "$trace"); n=$(run "$new" "$trace")
        else
            n=$(run "$new" "$trace"); b=$(run "$base" "$trace")
        fi
        echo "$b $n" >>"$tmp/cpu"
    done
    awk -v runs="$runs" '
        function med(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        { b[NR] = $1; n[NR] = $2; r[NR] = $2 / $1; bb[NR] = $1; nn[NR] = $2 }
        END {
            mb = med(b, NR); mn = med(n, NR); mr = med(r, NR)
            printf "CPU ms, %d runs each, taking turns: base %.1f [%.1f-%.1f]  new %.1f [%.1f-%.1f]  new/base %.3f [%.3f-%.3f]\n",
                NR, mb, b[1], b[NR], mn, n[1], n[NR], mr, r[1], r[NR]
        }' "$tmp/cpu"
    echo "load: $(uptime | sed 's/.*load average: //')"
done

#!/bin/bash
# Cold cache lines per writer call (issue 24): a recorded trace replayed
# under callgrind with tiny simulated caches (2 KB L1, 8 KB last level), so
# that nearly every distinct line a call touches is a miss, as after the
# runtime's JIT has evicted the map. Per load call: inclusive data misses
# of the last level (DLmr + DLmw) divided by its calls, counted inside
# run_calls only, and its instructions.
# Usage: coldlines.sh BUILD trace [bench_replay options...]
set -eu
build=$1 trace=$2
shift 2
prog=$build/bench/idmap/.libs/bench_replay
[ -x "$prog" ] || prog=$build/bench/idmap/bench_replay
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
LD_LIBRARY_PATH=$build/libmdtools/.libs valgrind --tool=callgrind --cache-sim=yes \
    --D1=2048,2,64 --I1=32768,8,64 --LL=8192,2,64 --toggle-collect=run_calls \
    --callgrind-out-file="$tmp/cg" "$prog" -n 1 "$@" "$trace" >/dev/null 2>"$tmp/log"
# incl FUNC EVENT: inclusive EVENT of FUNC summed over its callers, and calls.
incl() {
    callgrind_annotate --inclusive=yes --tree=caller --threshold=100 --show="$2" "$tmp/cg" \
        2>/dev/null | awk -v fn="$1" '
            /^ *$/ { c = 0; next }
            /^ *[0-9,.]+ +(\([ 0-9.%]+\) +)?< / {
                if (match($0, /\([0-9,]+x\)/)) { x = substr($0, RSTART + 1, RLENGTH - 3); gsub(",", "", x); c += x }
                next
            }
            /\* / && c && ($0 ~ ":" fn " " || $0 ~ ":" fn "$") {
                n = $1; gsub(",", "", n); if (n == ".") n = 0; s += n; calls += c
            }
            END { printf "%d %d\n", s, calls }'
}
printf '%-26s %8s %10s %10s\n' call calls lines/call Ir/call
for f in mdt_idmap_function_load mdt_idmap_code_add mdt_idmap_class_load mdt_idmap_module_load; do
    read -r r calls < <(incl $f DLmr)
    read -r w _ < <(incl $f DLmw)
    read -r ir _ < <(incl $f Ir)
    [ "$calls" -gt 0 ] || continue
    awk -v f=$f -v c="$calls" -v l=$((r + w)) -v i="$ir" \
        'BEGIN { printf "%-26s %8d %10.1f %10.0f\n", f, c, l / c, i / c }'
done

#!/bin/sh
# The SIGPROF handler's instructions per sample and per frame, without a
# runtime (bench/profiler/README.md, "The handler's cost"): bench/profiler/
# handler under callgrind, counting on_sigprof and what it calls, for each
# kind of stack at several depths, with the walk cache and without; a cold
# walk's time (caches evicted before each call); then what the kernel spends delivering
# a signal and returning from it (CPU time, not instructions: five runs).
#
#   bench/profiler/handler.sh [BUILDDIR [CALLS]]      (defaults: build, 1000)
#
# Instruction counts are exact: one run each. Per frame is the slope
# between depths 5 and 64.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
calls=${2:-1000}
prog=$build/bench/profiler/handler
[ -x "$prog" ] || { echo "handler.sh: $prog not built (make bench/profiler/handler)" >&2; exit 1; }
command -v valgrind >/dev/null 2>&1 || { echo "handler.sh: valgrind is not installed" >&2; exit 1; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# With the walk cache (sampler.c) and without it (HANDLER_NOCACHE=1: every
# frame looked up and its prolog decoded): instructions and, from
# callgrind's cache simulation, D1 misses per sample.
printf '%-8s %6s %-8s %12s %10s %10s\n' kind depth cache instructions per-sample D1/sample
for kind in managed native mixed; do
    for depth in 5 20 47 64 255; do
        for nocache in 0 1; do
            HANDLER_NOCACHE=$nocache valgrind --tool=callgrind --cache-sim=yes \
                --callgrind-out-file="$out/cg" --toggle-collect=on_sigprof \
                "$prog" "$depth" "$kind" "$calls" >"$out/log" 2>&1 || { cat "$out/log" >&2; exit 1; }
            set -- $(sed -n 's/^summary: *\([0-9 ]*\)$/\1/p' "$out/cg")
            [ $# -ge 5 ] || { echo "handler.sh: no summary in callgrind's output" >&2; exit 1; }
            # events: Ir Dr Dw I1mr D1mr D1mw ...
            c=$([ "$nocache" = 0 ] && echo yes || echo no)
            printf '%-8s %6s %-8s %12s %10s %10s\n' "$kind" "$depth" "$c" "$1" $(($1 / calls)) \
                $((($5 + $6) / calls))
            echo "$kind$c $depth $1" >>"$out/all"
        done
    done
done
awk -v calls="$calls" '$2 == 5 { a[$1] = $3 } $2 == 64 { b[$1] = $3 }
    END { for (k in a) printf "%s: %.0f instructions per frame (depth 5 to 64)\n", k, (b[k] - a[k]) / calls / 59 }' "$out/all"
# A cold walk, not under valgrind: 64 MiB read between two calls (more than
# this machine's caches), each call timed alone, the median of 300.
for depth in 5 20 47; do
    for nocache in 0 1; do
        HANDLER_NOCACHE=$nocache "$prog" "$depth" managed 300 2000 65536
    done
done
for i in 1 2 3 4 5; do
    "$prog" signal 200000
done

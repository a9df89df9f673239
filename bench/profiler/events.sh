#!/bin/sh
# The exceptions and contention modes' overhead against dotnet-trace
# collecting the same events, in one run.
#
#   bench/profiler/events.sh [BUILDDIR [ROUNDS [THROWS_N [WAITS_N]]]]
#
# Workloads (data/profiler/Workload/Events.cs): `throws OUT N` throws
# 500 x N exceptions (two types, two sites, each caught by its caller);
# `contention OUT N` makes one thread wait N times on a lock another holds
# for 50 ms. Each round runs, in rotating order:
#   throws-base        the throws workload alone
#   throws-mdprofile   mdprofile --mode exceptions (every throw: its type
#                      and stack, counted per (type, stack))
#   throws-trace       dotnet-trace collect with the runtime's exception
#                      events and their stacks
#                      (Microsoft-Windows-DotNETRuntime:0x8000:4: every
#                      ExceptionThrown_V1 with its stack, what its
#                      `--profile` of exceptions enables)
#   waits-base, waits-mdprofile (--mode contention), waits-trace
#                      (Microsoft-Windows-DotNETRuntime:0x4000:4, the
#                      contention keyword: ContentionStart/Stop with stacks)
# and reports, per workload, the medians (with min-max) of the CPU time of
# the whole run (user + system of every process: the program, the
# profiler's threads, dotnet-trace's own process) and of the wall time, and
# their ratios to the base. dotnet-trace comes from `dotnet tool install`
# into BUILDDIR/bench/profiler/tools (the NuGet feed), as run.sh's.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-7}
tn=${3:-400}
wn=${4:-20}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler/events
mkdir -p "$out"
dotnet_trace_install "$out"

run_one() { # config round
    cfg=$1
    r=$2
    m="python3 $top/bench/profiler/measure.py"
    case $cfg in
    throws-base) $m dotnet "$workload" throws "$out/t.exp" "$tn" ;;
    throws-mdprofile) $m "$mdprofile" --mode exceptions -o "$out/throws.log" -- \
        dotnet "$workload" throws "$out/t.exp" "$tn" ;;
    throws-trace) $m "$dotnet_trace" collect --show-child-io \
        --providers Microsoft-Windows-DotNETRuntime:0x8000:4 -o "$out/throws.nettrace" -- \
        dotnet "$workload" throws "$out/t.exp" "$tn" ;;
    waits-base) $m dotnet "$workload" contention "$out/w.exp" "$wn" ;;
    waits-mdprofile) $m "$mdprofile" --mode contention -o "$out/waits.log" -- \
        dotnet "$workload" contention "$out/w.exp" "$wn" ;;
    waits-trace) $m "$dotnet_trace" collect --show-child-io \
        --providers Microsoft-Windows-DotNETRuntime:0x4000:4 -o "$out/waits.nettrace" -- \
        dotnet "$workload" contention "$out/w.exp" "$wn" ;;
    esac >"$out/$cfg.out" 2>&1
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/$cfg.out" | tail -n 1)
    grep -q "done" "$out/$cfg.out" && [ -n "$cost" ] || { cat "$out/$cfg.out" >&2; exit 1; }
    echo "$cfg $r $cost" >>"$out/results.txt"
}

: >"$out/results.txt"
configs="throws-base throws-mdprofile throws-trace waits-base waits-mdprofile waits-trace"
rotate "$rounds" run_one $configs
python3 - "$out/results.txt" <<'PY'
import statistics
import sys
from collections import defaultdict
cpu, wall = defaultdict(list), defaultdict(list)
for line in open(sys.argv[1]):
    cfg, _, c, w = line.split()
    cpu[cfg].append(int(c))
    wall[cfg].append(int(w))
for work in ("throws", "waits"):
    base_c, base_w = statistics.median(cpu[work + "-base"]), statistics.median(wall[work + "-base"])
    for tool in ("base", "mdprofile", "trace"):
        k = work + "-" + tool
        c, w = statistics.median(cpu[k]), statistics.median(wall[k])
        print("%-16s cpu %6.0f ms (%d-%d) x%.2f   wall %6.0f ms (%d-%d) x%.2f   n=%d"
              % (k, c, min(cpu[k]), max(cpu[k]), c / base_c, w, min(wall[k]), max(wall[k]), w / base_w,
                 len(cpu[k])))
PY

#!/bin/sh
# Wall-clock mode's cost against dotnet-trace's sampled thread time, in one
# run (issue 27).
#
#   bench/profiler/wall.sh [BUILDDIR [ROUNDS]]
#
# Two programs of data/profiler/Workload (Wall.cs): `wall 3000`, four
# threads 3 s each in Monitor.Wait, Thread.Sleep, a pipe read and a spin
# (one core busy), and `idle 3000 1000`, 1,000 threads in Monitor.Wait for
# 3 s. Each round runs each program, in rotating order, as:
#   base          the program alone
#   wall-1000     mdprofile --mode wall (1 kHz of wall time, the default
#                 budget of 2,000 signals a second)
#   wall-100      mdprofile --mode wall --rate 100 (dotnet-trace's rate)
#   dotnet-trace  dotnet-trace collect --profile dotnet-sampled-thread-time
#                 (the EventPipe sample profiler: every managed thread's
#                 stack about every 10 ms, the runtime suspended for it)
# and reports, per program and configuration, the median CPU time of the
# whole run (user + system of every process: the program, the profiler's
# threads, dotnet-trace's own process) and its wall time, with the range
# over the rounds, and the median CPU time's ratio to base and its extra
# CPU milliseconds per second of the program's run. dotnet-trace is
# installed as bench/profiler/run.sh does (`dotnet tool install` into
# BUILDDIR/bench/profiler/tools, from the NuGet feed).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler
mkdir -p "$out"
dotnet_trace_install "$out"

run_one() { # program config round
    prog=$1
    cfg=$2
    r=$3
    case $prog in
    wall) args="wall $out/wall.expected 3000" ;;
    idle) args="idle $out/idle.expected 3000 1000" ;;
    esac
    m="python3 $top/bench/profiler/measure.py"
    case $cfg in
    base) $m dotnet "$workload" $args ;;
    wall-1000) $m "$mdprofile" --mode wall -o "$out/wall-$prog.log" -- dotnet "$workload" $args ;;
    wall-100) $m "$mdprofile" --mode wall --rate 100 -o "$out/wall100-$prog.log" -- dotnet "$workload" $args ;;
    dotnet-trace) $m "$dotnet_trace" collect --show-child-io --profile dotnet-sampled-thread-time \
        -o "$out/wall-$prog.nettrace" -- dotnet "$workload" $args ;;
    esac >"$out/wall-$prog-$cfg.out" 2>&1
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/wall-$prog-$cfg.out" | tail -n 1)
    [ -n "$cost" ] || { cat "$out/wall-$prog-$cfg.out" >&2; exit 1; }
    echo "$prog $cfg $r $cost" >>"$out/wall-results.txt"
}

: >"$out/wall-results.txt"
configs="base wall-1000 wall-100 dotnet-trace"
run_both() { # config round
    run_one wall "$1" "$2"
    run_one idle "$1" "$2"
}
rotate "$rounds" run_both $configs
python3 - "$out/wall-results.txt" <<'PY'
import sys
from collections import defaultdict
from statistics import median
runs = defaultdict(list)
for line in open(sys.argv[1]):
    prog, cfg, r, cpu, wall = line.split()
    runs[(prog, cfg)].append((int(cpu), int(wall)))
for prog in ("wall", "idle"):
    base = median(c for c, _ in runs[(prog, "base")])
    print("%s: median CPU ms [min-max], x base, extra CPU ms per s of run; median wall ms [min-max]" % prog)
    for cfg in ("base", "wall-1000", "wall-100", "dotnet-trace"):
        v = runs[(prog, cfg)]
        if not v:
            continue
        cpu = median(c for c, _ in v)
        wall = median(w for _, w in v)
        print("  %-13s %6d [%d-%d]  x%.2f  %+6.0f ms/s   %6d [%d-%d]  (%d runs)"
              % (cfg, cpu, min(c for c, _ in v), max(c for c, _ in v), cpu / base,
                 (cpu - base) * 1000.0 / wall, wall, min(w for _, w in v), max(w for _, w in v), len(v)))
PY

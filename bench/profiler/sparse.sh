#!/bin/sh
# The CPU-time timer on a busy machine, and the move of the threads it
# serves badly to a perf clock every 4 ms of their CPU (perfclock.c,
# mdp_perf_move_sparse), in one run.
#
#   bench/profiler/sparse.sh [BUILDDIR [ROUNDS [SPINNERS]]]
#
# SPINNERS busy shell loops (default 4) run beside the whole benchmark, so
# that the kernel's ticks often find another thread running. Each round
# runs data/profiler/Workload's `bench 3000 clock` (a fixed amount of work
# on one thread, every case of the names workload once a round, the
# thread's CPU clock read after each call: a system call every 20-40 us,
# as the names workload makes; a thread without system calls got its
# timer at ~257 a CPU second beside 8 loops, this one far less often), in
# rotating order, as:
#   base    the program alone
#   timer   mdprofile with perf_event_open refused (MDPROFILE_TEST_PERF=
#           refuse: no thread can move; the timer alone, as before)
#   moved   mdprofile as it runs by default (threads the timer serves
#           badly move to the perf clock)
# and reports per configuration the median CPU time of the whole run (user
# + system of every process) with its range, its ratio to base, and for
# the profiled ones the stacks per CPU second of the log (#stats signals
# over samples) and the threads moved. Without perf_event_open here the
# two profiled configurations are the same (said).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
spinners=${3:-4}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler
mkdir -p "$out"

pids=
i=0
while [ $i -lt "$spinners" ]; do
    sh -c 'while :; do :; done' &
    pids="$pids $!"
    i=$((i + 1))
done
trap 'kill $pids 2>/dev/null || true' EXIT INT TERM

run_one() { # config round
    cfg=$1
    r=$2
    m="python3 $top/bench/profiler/measure.py"
    log=$out/sparse-$cfg.log
    case $cfg in
    base) $m dotnet "$workload" bench 3000 clock ;;
    timer) MDPROFILE_TEST_PERF=refuse $m "$mdprofile" -o "$log" -- dotnet "$workload" bench 3000 clock ;;
    moved) $m "$mdprofile" -o "$log" -- dotnet "$workload" bench 3000 clock ;;
    esac >"$out/sparse-$cfg.out" 2>&1
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/sparse-$cfg.out" | tail -n 1)
    [ -n "$cost" ] || { cat "$out/sparse-$cfg.out" >&2; exit 1; }
    stats="0 0 0"
    if [ "$cfg" != base ]; then
        stats=$(sed -n 's/^#stats samples=\([0-9]*\) .* signals=\([0-9]*\) .* clock.moved=\([0-9]*\).*/\1 \2 \3/p' "$log")
        [ -n "$stats" ] || { echo "no #stats in $log" >&2; exit 1; }
    fi
    echo "$cfg $r $cost $stats" >>"$out/sparse-results.txt"
}

: >"$out/sparse-results.txt"
rotate "$rounds" run_one base timer moved
python3 - "$out/sparse-results.txt" "$spinners" <<'PY'
import sys
from collections import defaultdict
from statistics import median
runs = defaultdict(list)
for line in open(sys.argv[1]):
    cfg, r, cpu, wall, samples, signals, moved = line.split()
    runs[cfg].append((int(cpu), int(wall), int(samples), int(signals), int(moved)))
base = median(v[0] for v in runs["base"])
print("bench 3000 clock beside %s busy loops: median CPU ms [min-max], x base; stacks per CPU s "
      "[min-max]; threads moved" % sys.argv[2])
for cfg in ("base", "timer", "moved"):
    v = runs[cfg]
    cpu = median(x[0] for x in v)
    line = "  %-6s %6d [%d-%d]  x%.3f" % (cfg, cpu, min(x[0] for x in v), max(x[0] for x in v), cpu / base)
    if cfg != "base":
        per = [1000.0 * x[3] / x[2] for x in v if x[2]]
        line += "   %4.0f [%.0f-%.0f] stacks/CPU s   moved %s" % (
            median(per), min(per), max(per), ",".join(str(x[4]) for x in v))
    print(line + "  (%d runs)" % len(v))
PY

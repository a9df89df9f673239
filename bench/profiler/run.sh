#!/bin/sh
# mdprofile's overhead against the runtime vendor's own sampler, in one run.
#
#   bench/profiler/run.sh [BUILDDIR [ROUNDS [N]]]
#
# The CPU-bound program is data/profiler/Workload's `bench N` (N rounds of
# the generic, nested, framework and leaf work of the names test; it prints
# how long the rounds took). Each round runs, in rotating order:
#   base          the program alone
#   mdprofile     mdprofile, sample mode at 1 kHz of thread CPU time
#   dotnet-trace  dotnet-trace collect with the EventPipe sample profiler
#                 (what `--profile cpu-sampling` was before dotnet-trace 10,
#                 whose cpu-sampling profile needs collect-linux and kernel
#                 user_events; it samples every managed thread each 1 ms)
#   calls-fast    mdprofile calls mode, assembly enter hook
#   calls-slow    mdprofile calls mode, C enter hook behind the runtime's stub
#   base-short, mdprofile-short   the same as base and mdprofile with 10
#                 rounds only: mdprofile's fixed cost (loading, reading the
#                 images, writing the log), to tell it from the cost per
#                 second of sampling
# and reports medians, each as a ratio to base: the program's own time for
# its work, the CPU time of the whole run (user + system of every process:
# the program, its profiler threads, dotnet-trace's own process) and its
# wall time (startup, profiler setup and log writing included). On a busy
# machine CPU time is the steadier measure of what profiling costs. dotnet-trace is installed with `dotnet tool
# install` into BUILDDIR/bench/profiler/tools (from the NuGet feed).
# Then it compares names: how many distinct instantiations of the
# workload's generic methods each tool's output tells apart.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
n=${3:-3000}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler
mkdir -p "$out"
dotnet_trace_install "$out"
providers='Microsoft-DotNETCore-SampleProfiler,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:4'

run_one() { # config round
    cfg=$1
    r=$2
    m="python3 $top/bench/profiler/measure.py"
    case $cfg in
    base) $m dotnet "$workload" bench "$n" ;;
    mdprofile) $m "$mdprofile" --rate 1000 --debug-names -o "$out/sample.log" -- dotnet "$workload" bench "$n" ;;
    dotnet-trace) $m "$dotnet_trace" collect --show-child-io --providers "$providers" \
        -o "$out/trace.nettrace" -- dotnet "$workload" bench "$n" ;;
    calls-fast) $m "$mdprofile" --mode calls --elt fast -o "$out/calls-fast.log" -- dotnet "$workload" bench "$n" ;;
    calls-slow) $m "$mdprofile" --mode calls --elt slow -o "$out/calls-slow.log" -- dotnet "$workload" bench "$n" ;;
    base-short) $m dotnet "$workload" bench 10 ;;
    mdprofile-short) $m "$mdprofile" --rate 1000 -o "$out/short.log" -- dotnet "$workload" bench 10 ;;
    esac >"$out/$cfg.out" 2>&1
    work=$(sed -n 's/^bench \([0-9]*\) ms.*/\1/p' "$out/$cfg.out" | head -n 1)
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/$cfg.out" | tail -n 1)
    [ -n "$work" ] && [ -n "$cost" ] || { cat "$out/$cfg.out" >&2; exit 1; }
    echo "$cfg $r $work $cost" >>"$out/results.txt"
}

: >"$out/results.txt"
configs="base mdprofile dotnet-trace calls-fast calls-slow base-short mdprofile-short"
rotate "$rounds" run_one $configs
# the trace's frame names, converted once, outside the timed runs
# (convert appends ".speedscope.json" to the name it is given, whatever its
# extension: given trace.speedscope.json it wrote trace.speedscope.speedscope.json,
# so ask for "trace" and take the one file it wrote.)
rm -f "$out"/trace*.speedscope.json
"$dotnet_trace" convert --format Speedscope -o "$out/trace" "$out/trace.nettrace" \
    >"$out/convert.log" 2>&1 || { cat "$out/convert.log" >&2; exit 1; }
set -- "$out"/trace*.speedscope.json
[ -f "$1" ] || { echo "run.sh: dotnet-trace convert wrote no speedscope file:" >&2; cat "$out/convert.log" >&2; exit 1; }
python3 "$top/bench/profiler/report.py" "$out/results.txt" "$out/sample.log" "$1"

#!/bin/sh
# The cost of alloc mode's sampled stacks and of heap mode, against
# dotnet-trace's gc-verbose profile (AllocationTick events with their
# stacks) and its collection of the runtime's AllocationSampled events
# with their stacks, in one run.
#
#   [CONFIGS="base stacks ..."] bench/profiler/alloc.sh [BUILDDIR [ROUNDS [N [HEAP]]]]
#
# The allocation-heavy program is data/profiler/Workload's `allocstacks N`
# (N rounds of 4 byte arrays of 1,000 elements and 12 small objects: 4.1 KB
# and 16 objects a round). Each round runs, in rotating order:
#   base          the program alone
#   counts        mdprofile --mode alloc --alloc-sample 0: exact counts per
#                 type (the ObjectAllocated callback on every object)
#   stacks        mdprofile --mode alloc: a stack per 512 KiB, from the
#                 runtime's AllocationSampled events (.NET 10; no
#                 ObjectAllocated: the allocations keep their fast path)
#   stacks-100k   the same at the runtime's own mean (every event kept)
#   stacks-callback  mdprofile --mode alloc --alloc-path callback: exact
#                 counts and a stack per 512 KiB from ObjectAllocated
#   stacks-64k    the same, a stack per 64 KiB (8x the stacks)
#   gc-verbose    dotnet-trace collect --profile gc-verbose (AllocationTick:
#                 an event with its stack per ~100 KB allocated, and the GC
#                 events)
#   trace-sampled dotnet-trace collect --providers
#                 Microsoft-Windows-DotNETRuntime:0x80000000000:4 (the
#                 AllocationSampling keyword: AllocationSampled with its
#                 stack, one per 100 KiB on average; dotnet-trace has no
#                 profile of its own for it)
#   heap-base     `Workload heap HEAP`: HEAP objects kept alive through
#                 three gen2 GCs, alone
#   heap          the same under mdprofile --mode heap (a walk of the heap
#                 after each gen2 GC)
# and reports the medians of the CPU time (user + system of every process:
# the program, its profiler threads, dotnet-trace's own process) as ratios
# to base (heap to heap-base), with the spread of the per-round ratios,
# and heap mode's walks (#stats heap.walk_ms). dotnet-trace is installed
# with `dotnet tool install` into BUILDDIR/bench/profiler/tools, as run.sh
# does.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
n=${3:-1000000}
heap_n=${4:-2000000}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler/alloc
mkdir -p "$out"
dotnet_trace_install "$out"

run_one() { # config round
    cfg=$1
    r=$2
    m="python3 $top/bench/profiler/measure.py"
    case $cfg in
    base) $m dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    counts) $m "$mdprofile" --mode alloc --alloc-sample 0 -o "$out/counts.log" -- \
        dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    stacks) $m "$mdprofile" --mode alloc -o "$out/stacks.log" -- \
        dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    stacks-100k) $m "$mdprofile" --mode alloc --alloc-sample 102400 -o "$out/stacks-100k.log" -- \
        dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    stacks-callback) $m "$mdprofile" --mode alloc --alloc-path callback -o "$out/stacks-callback.log" -- \
        dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    stacks-64k) $m "$mdprofile" --mode alloc --alloc-path callback --alloc-sample 65536 \
        -o "$out/stacks-64k.log" -- dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    gc-verbose) $m "$dotnet_trace" collect --profile gc-verbose -o "$out/trace.nettrace" -- \
        dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    trace-sampled) $m "$dotnet_trace" collect --providers Microsoft-Windows-DotNETRuntime:0x80000000000:4 \
        -o "$out/trace-sampled.nettrace" -- dotnet "$workload" allocstacks "$out/x.expected" "$n" ;;
    heap-base) $m dotnet "$workload" heap "$out/x.expected" "$heap_n" ;;
    heap) $m "$mdprofile" --mode heap -o "$out/heap.log" -- dotnet "$workload" heap "$out/x.expected" "$heap_n" ;;
    esac >"$out/$cfg.out" 2>&1
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/$cfg.out" | tail -n 1)
    [ -n "$cost" ] || { cat "$out/$cfg.out" >&2; exit 1; }
    extra=
    case $cfg in
    stacks*) extra=$(sed -n 's/.* alloc\.samples=\([0-9]*\).*/\1/p' "$out/$cfg.log") ;;
    heap) extra=$(sed -n 's/.* heap\.walks=\([0-9]*\) heap\.walk_ms=\([0-9]*\).*/\1:\2/p' "$out/heap.log") ;;
    esac
    echo "$cfg $r $cost ${extra:--}" >>"$out/results.txt"
}

: >"$out/results.txt"
configs=${CONFIGS:-"base counts stacks stacks-100k stacks-callback stacks-64k gc-verbose trace-sampled heap-base heap"}
rotate "$rounds" run_one $configs
python3 "$top/bench/profiler/alloc_report.py" "$out/results.txt"

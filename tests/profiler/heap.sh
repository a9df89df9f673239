#!/bin/sh
# Live heap (issue 27): `Workload heap` (data/profiler/Workload/Allocs.cs)
# keeps 50,000 Retained objects alive through three gen2 GCs under
# `mdprofile --mode heap`; heap.py checks every snapshot's counts exactly,
# and batch's --top and --pprof of them. Needs .NET 10 (the heap walk is
# ICorProfilerInfo15's): on an older runtime the log says so and this
# test skips.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/heap-profile.log
profile "$log" --mode heap --debug-names -- dotnet "$workload" heap "$work/heap.expected" 50000 \
    >"$work/heap.out" 2>&1 || { cat "$work/heap.out" >&2; fail "the profiled heap run failed"; }
grep -q "no ICorProfilerInfo15" "$log" && skip "the runtime has no ICorProfilerInfo15 (.NET 10): no heap walk"
python3 "$top/tests/profiler/heap.py" "$log" "$work/heap.expected" --assemblies "$work/bin/Workload"

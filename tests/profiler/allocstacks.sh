#!/bin/sh
# Allocation stacks (issue 27): `Workload allocstacks` (data/profiler/
# Workload/Allocs.cs) allocates System.Byte[] from AllocA.Make (3x the
# bytes) and AllocB.Make, and Payload objects from Payloads.Make, under
# `mdprofile --mode alloc` on both paths: the runtime's AllocationSampled
# events (.NET 10: the default; at --alloc-sample 32768, below the
# runtime's fixed mean, which is then used; at 262144, one event in 2.56
# kept), and ObjectAllocated (`--alloc-path callback`, --alloc-sample
# 32768). allocstacks.py checks the
# estimates per (type, allocating method) against what the program
# allocated, within 4.5 standard deviations of the sampling (its
# docstring says why), their stacks, and batch's --top --type, --folded
# and --pprof of them.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
run() { # NAME ROUNDS PATH RATE [OPTION...]
    name=$1 rounds=$2 route=$3 rate=$4
    shift 4
    log=$work/allocstacks-$name.log
    profile "$log" --mode alloc --alloc-sample "$rate" --debug-names "$@" -- dotnet "$workload" \
        allocstacks "$work/allocstacks-$name.expected" "$rounds" >"$work/allocstacks-$name.out" 2>&1 ||
        { cat "$work/allocstacks-$name.out" >&2; fail "the profiled allocstacks run ($name) failed"; }
    if [ "$route" = event ] && grep -q "no AllocationSampled event" "$log"; then
        # an older runtime: the log says it fell back (not a pass of the event path)
        echo "$name: the runtime has no AllocationSampled event (.NET 10): event path not checked"
        return 0
    fi
    python3 "$top/tests/profiler/allocstacks.py" "$log" "$work/allocstacks-$name.expected" "$rate" \
        "$route" --assemblies "$work/bin/Workload" || status=1
}
status=0
run event 60000 event 32768
run event-thinned 150000 event 262144
run callback 20000 callback 32768 --alloc-path callback
exit $status

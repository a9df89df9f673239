#!/bin/sh
# Allocation stacks (issue 27): `Workload allocstacks` (data/profiler/
# Workload/Allocs.cs) allocates System.Byte[] from AllocA.Make (3x the
# bytes) and AllocB.Make, and Payload objects from Payloads.Make, under
# `mdprofile --mode alloc --alloc-sample 32768`. allocstacks.py checks the
# estimates per (type, allocating method) against what the program
# allocated, within 4.5 standard deviations of the sampling (its
# docstring says why), their stacks, and batch's --top --type, --folded
# and --pprof of them.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/allocstacks-profile.log
profile "$log" --mode alloc --alloc-sample 32768 --debug-names -- dotnet "$workload" allocstacks \
    "$work/allocstacks.expected" 20000 >"$work/allocstacks.out" 2>&1 ||
    { cat "$work/allocstacks.out" >&2; fail "the profiled allocstacks run failed"; }
python3 "$top/tests/profiler/allocstacks.py" "$log" "$work/allocstacks.expected" 32768 \
    --assemblies "$work/bin/Workload"

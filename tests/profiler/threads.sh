#!/bin/sh
# Threads and time (issue 27): `Workload threads` (data/profiler/Workload/
# Threads.cs) runs Worker-A, Worker-B, an unnamed thread and Late (which
# starts burning after 2.3 s), each for a known CPU time of its own, under
# mdprofile at the default rate and slice. threads.py checks each thread by
# the TID it read itself: its #thread line and name, its samples against
# its CPU time, the 2:1:1 shares, Late's first slice, batch's per-thread
# speedscope profiles in time order, and --thread, --from, --to.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/threads.log
profile "$log" --debug-names -- dotnet "$workload" threads "$work/threads.expected" 600 \
    >"$work/threads.out" 2>&1 || { cat "$work/threads.out" >&2; fail "the profiled threads run failed"; }
python3 "$top/tests/profiler/threads.py" "$log" "$work/threads.expected" --assemblies "$work/bin/Workload"

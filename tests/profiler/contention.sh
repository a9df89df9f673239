#!/bin/sh
# Contention mode (issue 27): in `Workload contention` (data/profiler/
# Workload/Events.cs) Holder holds a lock 50 ms at a time while Waiter
# blocks on it, 20 times; events.py checks the wait records (count, time
# against the waiter's own stopwatch, stack, thread), batch's --top,
# --folded and --pprof of them, and the log cut anywhere.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/contention.log
profile "$log" --mode contention --debug-names -- dotnet "$workload" contention "$work/contention.expected" \
    >"$work/contention.out" 2>&1 || { cat "$work/contention.out" >&2; fail "the profiled contention run failed"; }
python3 "$top/tests/profiler/events.py" contention "$log" "$work/contention.expected" --assemblies "$work/bin/Workload"

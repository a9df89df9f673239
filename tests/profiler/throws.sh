#!/bin/sh
# Exceptions mode (issue 27): `Workload throws` (data/profiler/Workload/
# Events.cs) throws 300 InvalidOperationException from Thrower.Fail and 200
# Oops<int> from Checker.Check<string>; events.py checks the throw records
# type by type and site by site, batch's --top, --folded, --json and
# --pprof of them, and the log cut anywhere; then again under
# --mode sample,exceptions (one run, both kinds of record, each throw
# counted once).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/throws.log
profile "$log" --mode exceptions --debug-names -- dotnet "$workload" throws "$work/throws.expected" \
    >"$work/throws.out" 2>&1 || { cat "$work/throws.out" >&2; fail "the profiled throws run failed"; }
python3 "$top/tests/profiler/events.py" throws "$log" "$work/throws.expected" --assemblies "$work/bin/Workload"
# sample,exceptions: both in one run, each throw counted once
log=$work/throws-sample.log
profile "$log" --mode sample,exceptions -- dotnet "$workload" throws "$work/throws-sample.expected" \
    >"$work/throws-sample.out" 2>&1 || { cat "$work/throws-sample.out" >&2; fail "the profiled sample,exceptions run failed"; }
python3 "$top/tests/profiler/events.py" throws "$log" "$work/throws-sample.expected" --mode sample,exceptions \
    --assemblies "$work/bin/Workload"

#!/bin/sh
# Sample mode from startup on the names workload (data/profiler/Workload):
# every frame of the program resolves, in-process, to the name the program
# prints about itself through reflection (generic methods of generic
# classes over value and reference types with shared __Canon code, nested
# generics, framework code over the program's types, two threads, tier-1
# and OSR code); format and statistics are consistent. The log and the
# expected names stay in the build tree (tests/profiler/names.*) for the
# batch resolver's tests.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/names.log
exp=$work/names.expected
profile "$log" --debug-names -- dotnet "$workload" names "$exp" 2500 >"$work/names.out" 2>&1 ||
    { cat "$work/names.out" >&2; fail "the profiled run failed"; }
check names "$log" "$exp"

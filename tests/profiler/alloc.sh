#!/bin/sh
# alloc mode from startup: objects of the program's own types (a class, a
# generic class over a value and a reference type, arrays of a struct and
# jagged arrays) are counted exactly, each with one size, under the
# portable descriptor reflection gives and the in-process name; every type
# resolves offline through mdinspect batch to reflection's name. Then the
# same run in two modes at once (sample,alloc): one log holds both kinds of
# record, the counts as exact.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/alloc.log
exp=$work/alloc.expected
profile "$log" --mode alloc --alloc-sample 0 --debug-names -- dotnet "$workload" alloc "$exp" \
    >"$work/alloc.out" 2>&1 || { cat "$work/alloc.out" >&2; fail "the profiled run failed"; }
check_offline alloc "$log" "$exp"

log=$work/sample-alloc.log
exp=$work/sample-alloc.expected
# exact counts with stacks: ObjectAllocated (the event path has no exact counts)
profile "$log" --mode sample,alloc --alloc-path callback --debug-names -- dotnet "$workload" alloc "$exp" \
    >"$work/sample-alloc.out" 2>&1 || { cat "$work/sample-alloc.out" >&2; fail "the profiled run failed"; }
check_offline sample,alloc "$log" "$exp"

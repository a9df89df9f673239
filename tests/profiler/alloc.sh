#!/bin/sh
# alloc mode from startup: objects of the program's own types (a class, a
# generic class over a value and a reference type, arrays of a struct and
# jagged arrays) are counted exactly, each with one size, under the
# portable descriptor reflection gives and the in-process name; every type
# resolves offline through mdinspect batch to reflection's name.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/alloc.log
exp=$work/alloc.expected
profile "$log" --mode alloc --alloc-sample 0 --debug-names -- dotnet "$workload" alloc "$exp" \
    >"$work/alloc.out" 2>&1 || { cat "$work/alloc.out" >&2; fail "the profiled run failed"; }
check_offline alloc "$log" "$exp"

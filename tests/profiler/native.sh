#!/bin/sh
# Native time named (issue 24): the Workload's gc, jit and exceptions modes
# (data/profiler/Workload/Native.cs) spend most of their CPU time in the
# runtime's native code. Profiled from startup, each log must name its
# managed frames exactly (as names.sh), carry the ELF file of at least 95%
# of its native frames, and split the runtime's share by what the runtime
# was doing: mostly [gc], [jit], [exception] (with --exceptions) respectively
# (native.py).
# Then gc again with --no-activities: no frame carries an activity.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
status=0
run_native() { # MODE CHECK-AS MS [MDPROFILE-OPTION...]
    mode=$1 as=$2 ms=$3
    shift 3
    log=$work/native-$as.log
    profile "$log" --debug-names "$@" -- dotnet "$workload" "$mode" "$work/native-$as.expected" "$ms" \
        >"$work/native-$as.out" 2>&1 || { cat "$work/native-$as.out" >&2; fail "the profiled $mode run failed"; }
    echo "== $as"
    python3 "$top/tests/profiler/native.py" "$as" "$log" "$work/native-$as.expected" \
        --assemblies "$work/bin/Workload" || status=1
}
run_native gc gc 1500
run_native jit jit 1500
run_native exceptions exceptions 1500 --exceptions
run_native gc quiet 500 --no-activities
exit $status

#!/bin/sh
# calls mode from startup, with each set of hooks (the fast assembly ones
# and the slow ones behind the runtime's stubs): every method the program
# calls a known number of times is counted exactly, enters and the three
# ways out (returns, tail calls, unwinds by an exception), under its portable
# frame and its name: a plain method, a generic one over a value type and
# over a reference type (shared code), one that ends in a tail call and its
# target, methods an exception leaves or passes through, one that catches
# its own, and the caller that catches the others (not unwound). Every
# method of the program was left as often as it was entered; the log is
# format 2 and resolves offline through mdinspect batch to reflection's
# names.
# Then the names workload in calls mode: every method of the program the
# hooks saw entered is one the program named about itself (the expected
# names of names.sh are complete: a sample may land in any of them), every
# instantiation it named as it ran was entered, and all were left.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
. "$top/tests/common/check.sh"
for elt in fast slow; do
    log=$work/calls-$elt.log
    exp=$work/calls-$elt.expected
    profile "$log" --mode calls --elt $elt --debug-names -- dotnet "$workload" calls "$exp" \
        >"$work/calls-$elt.out" 2>&1 || { cat "$work/calls-$elt.out" >&2; fail "the profiled run failed ($elt)"; }
    echo "== $elt"
    st=0
    check_offline calls "$log" "$exp" >"$work/calls-$elt.check" || st=$?
    check_closing "$work/calls-$elt.check" "$st"
done
log=$work/calls-names.log
exp=$work/calls-names.expected
profile "$log" --mode calls --debug-names -- dotnet "$workload" names "$exp" 300 \
    >"$work/calls-names.out" 2>&1 || { cat "$work/calls-names.out" >&2; fail "the profiled run failed (names)"; }
echo "== names"
st=0
check_offline callnames "$log" "$exp" >"$work/calls-names.check" || st=$?
check_closing "$work/calls-names.check" "$st"
check_done

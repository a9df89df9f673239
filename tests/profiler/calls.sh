#!/bin/sh
# calls mode from startup, with each enter hook (the fast assembly one and
# the slow one behind the runtime's stub): every method the program calls
# a known number of times (a plain one, a generic one over a value type and
# over a reference type, whose code is shared) is counted exactly, under its
# portable frame and its name; every frame resolves offline through
# mdinspect batch to reflection's name.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
status=0
for elt in fast slow; do
    log=$work/calls-$elt.log
    exp=$work/calls-$elt.expected
    profile "$log" --mode calls --elt $elt --debug-names -- dotnet "$workload" calls "$exp" \
        >"$work/calls-$elt.out" 2>&1 || { cat "$work/calls-$elt.out" >&2; fail "the profiled run failed ($elt)"; }
    echo "== $elt"
    check_offline calls "$log" "$exp" >"$work/calls-$elt.check" || status=1
    cat "$work/calls-$elt.check"
done
awk '/^[0-9]+ passed, [0-9]+ failed$/ { p += $1; f += $3 } END { print p " passed, " f " failed" }' \
    "$work/calls-fast.check" "$work/calls-slow.check"
exit $status

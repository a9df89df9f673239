#!/bin/sh
# Every fuzz harness replayer and trace replayer finds its inputs by
# itself: each runs here from / with MDT_TOP_SRCDIR unset, as someone
# reproducing a finding would run it, and must pass. (The programs know
# the source tree they were configured from; the scripts, their own
# directory.) MDT_BUILDDIR (set by make check, default .) says only where
# the programs are.
bld=$(cd "${MDT_BUILDDIR:-.}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/common/check.sh"
for run in "$bld/tests/fuzz/fuzz_image_replay" "$bld/tests/generics/fuzz_sig_replay" \
    "$bld/tests/typeref/fuzz_resolve_replay" "$bld/tests/fuzz/fuzz_commands_replay" \
    "$bld/tests/fuzz/fuzz_shell_replay" "$bld/tests/fuzz/fuzz_typename_replay" \
    "$bld/tests/attach/fuzz_ipcreply_replay" "$bld/tests/il/fuzz_il_replay" \
    "$bld/tests/fuzz/fuzz_pe_replay" "$bld/tests/fuzz/fuzz_bundle_replay" \
    "$top/tests/idmap/run-traces.sh"; do
    name=${run#"$bld/"}
    name=${name#"$top/"}
    if out=$(cd / && env -u MDT_TOP_SRCDIR MDT_BUILDDIR="$bld" "$run" 2>&1); then
        check_pass "$name: $(printf '%s\n' "$out" | tail -n 1)"
    else
        check_fail "$name, run from / without MDT_TOP_SRCDIR:"
        printf '%s\n' "$out" | tail -n 5
    fi
done
check_done

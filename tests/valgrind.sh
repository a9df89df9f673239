#!/bin/sh
# Run the unit-test programs and a few mdinspect commands under valgrind's
# memcheck: any invalid access, uninitialised use or leak fails the case.
# Usage: tests/valgrind.sh BUILDDIR   (after `make check` built everything)
set -u
builddir=$(cd "${1:-build}" && pwd)
top=$(cd "$(dirname "$0")/.." && pwd)
export MDT_TOP_SRCDIR="$top" CK_FORK=no
vg="valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect"
. "$top/tests/common/check.sh"
run() { # EXPECTED-STATUS NAME CMD...   (valgrind's own errors give 99)
    want=$1 name=$2
    shift 2
    "$builddir/libtool" --mode=execute $vg "$@" >"$builddir/vg.$name.log" 2>&1
    if [ $? -eq "$want" ]; then
        check_pass "$name"
    else
        check_fail "$name"
        tail -n 20 "$builddir/vg.$name.log"
    fi
}
for t in "$builddir"/tests/unit/test_*; do
    case $t in *.o | *.log | *.trs) continue ;; esac
    [ -x "$t" ] || continue
    run 0 "$(basename "$t")" "$t"
done
mdi=$builddir/mdinspect/mdinspect
run 0 mdinspect-summary "$mdi" "$top/data/sample/Hello.exe" "$top/data/Everything.dll"
run 0 mdinspect-json "$mdi" --json "$top/data/corpus/asmresolver/HelloWorld.SchemaStream.exe"
run 0 mdinspect-dump "$mdi" -c 'dump TypeDef; dump CustomAttribute' "$top/data/Everything.dll"
run 1 mdinspect-bad "$mdi" "$top/data/corpus/asmresolver/HelloWorld.dump" \
    "$top/data/corpus/asmresolver/HelloWorld.MaliciousTypeSpecLoop.exe"
check_done

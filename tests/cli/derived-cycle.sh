#!/bin/sh
# `derived` on damaged metadata with a cycle of base types (issue 26): a
# copy of data/decl/Decl.dll whose Decl.Shape extends Decl.Unit (TypeDef
# row 7's Extends patched from TypeRef System.Object to TypeDef 9), so
# Shape <- Circle <- Unit <- Shape. `derived -a` must end, list each type
# once and exit 0; plain `derived` lists the one direct type. Prints one
# line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "derived-cycle.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "derived-cycle.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# The row: Flags 0x00100081, TypeName, TypeNamespace, Extends 0x0035
# (TypeRef 13), FieldList 2, MethodList 14; Extends becomes 0x0024 (TypeDef 9).
python3 - "$top/data/decl/Decl.dll" "$tmp/Cycle.dll" <<'PY' || exit 99
import re, sys
b = bytearray(open(sys.argv[1], 'rb').read())
hits = [m.start() for m in re.finditer(rb'\x81\x00\x10\x00....\x35\x00\x02\x00\x0e\x00', bytes(b), re.S)]
if len(hits) != 1:
    sys.exit('derived-cycle.sh: the TypeDef row of Decl.Shape is not where it was (%d matches)' % len(hits))
b[hits[0] + 8:hits[0] + 10] = b'\x24\x00'
open(sys.argv[2], 'wb').write(b)
PY
. "$top/tests/common/check.sh"
check() { # check WHAT COMMANDS EXPECTED-EXIT GREP-PATTERN COUNT
    out=$(timeout 20 "$prog" -c "$2" "$tmp/Cycle.dll" 2>&1)
    rc=$?
    n=$(printf '%s\n' "$out" | grep -c -- "$4")
    if [ "$rc" -eq "$3" ] && [ "$n" -eq "$5" ]; then
        check_pass "$1"
    else
        check_fail "$1: exit $rc (want $3), $n lines match '$4' (want $5)"
        printf '%s\n' "$out" | head -12 | sed 's/^/    | /'
    fi
}
check "the cycle is there: Shape extends Unit" 'token 0x02000007' 0 'Extends:.*0x02000009' 1
check "derived Decl.Unit: Decl.Shape, once" 'derived Decl.Unit' 0 'extends   Decl.Shape' 1
check "derived -a ends, each type once" 'derived -a Decl.Shape' 0 '^  Decl.dll' 3
check "derived -a lists Unit at depth 2" 'derived -a Decl.Shape' 0 'extends .*  2  Decl.Unit ' 1
check "derived -a from Unit: Shape, Circle, Square" 'derived -a Decl.Unit' 0 '^  Decl.dll' 3
check_done

#!/bin/sh
# Differential test of the IL decoder against the .NET ILDasm (issue 26):
# every method body's instructions, operands and exception clauses as
# `mdinspect il -a --json` gives them against `ildasm -tokens -bytes
# -raweh`, parsed by tests/il/ildiff.py (ILDasm's /BYTES column gives each
# operand exactly; see tests/il/README.md).
#
# ILDasm is NuGet's runtime.linux-x64.Microsoft.NETCore.ILDAsm, fetched once
# into the build tree (tests/il/nuget/) by tests/il/fetch-tool.sh. $ILDASM
# names an ildasm to use instead. Exits 77 saying why when neither can be
# had (no dotnet, no feed).
#
# By default (make check): the fixtures of data/ (not its corpus) and
# tests/il/data, and two small assemblies of the .NET shared framework.
# --all: every PE file under data/ and tests/ and every assembly of the
# newest installed Microsoft.NETCore.App.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "diff-ildasm.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "diff-ildasm.sh: python3 is needed" >&2; exit 77; }
LC_ALL=C
export LC_ALL
ildasm=${ILDASM:-}
if [ -z "$ildasm" ]; then
    ildasm=$("$here/fetch-tool.sh" ildasm "$build")
    rc=$?
    [ $rc -eq 0 ] || exit $rc
fi
fw=
for d in /usr/share/dotnet/shared/Microsoft.NETCore.App/*/ /usr/lib/dotnet/shared/Microsoft.NETCore.App/*/; do
    [ -f "$d/System.Private.CoreLib.dll" ] && fw=$d
done
cd "$top" || exit 99
if [ "${1:-}" = --all ]; then
    set -- $(find data tests -type f \( -name '*.dll' -o -name '*.exe' -o -name '*.netmodule' \) | sort)
    [ -n "$fw" ] && set -- "$@" "$fw"*.dll
else
    set -- data/*.dll data/*.netmodule data/sample/*.exe data/resources/*.dll \
        data/fwd/*.dll data/fwd/v*/*.dll tests/il/data/*.dll
    for f in System.Threading.Tasks.Parallel.dll System.Text.Encodings.Web.dll; do
        [ -n "$fw" ] && [ -f "$fw$f" ] && set -- "$@" "$fw$f"
    done
fi
exec python3 "$here/ildiff.py" --tool ildasm --peer "$ildasm" --mdinspect "$prog" "$@"

#!/bin/sh
# Differential test of the IL decoder against Mono's monodis (issue 26):
# every method body's instructions, operands and exception clauses as
# `mdinspect il -a --json` gives them against `monodis --show-tokens`,
# parsed and normalised by tests/il/ildiff.py (what is compared and how is
# said there and in tests/il/README.md).
#
# By default (make check): the fixtures of data/ (not its corpus) and
# tests/il/data, and two small Mono 4.5 assemblies, a few seconds.
# --all: every PE file under data/ and tests/ (monodis crashes on many of
# the corpus's: skipped and counted) and every assembly of Mono's 4.5
# libraries with its Facades. Exits 77 when monodis is not installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "diff-monodis.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "diff-monodis.sh: python3 is needed" >&2; exit 77; }
command -v monodis >/dev/null 2>&1 || { echo "diff-monodis.sh: monodis (Debian's mono-utils) is not installed" >&2; exit 77; }
LC_ALL=C
export LC_ALL
mono=/usr/lib/mono/4.5
cd "$top" || exit 99
if [ "${1:-}" = --all ]; then
    set -- $(find data tests -type f \( -name '*.dll' -o -name '*.exe' -o -name '*.netmodule' \) | sort)
    [ -d "$mono" ] && set -- "$@" "$mono"/*.dll "$mono"/*.exe "$mono"/Facades/*.dll
else
    set -- data/*.dll data/*.netmodule data/sample/*.exe data/resources/*.dll \
        data/fwd/*.dll data/fwd/v*/*.dll tests/il/data/*.dll
    for f in System.ServiceProcess.dll Mono.CompilerServices.SymbolWriter.dll; do
        [ -f "$mono/$f" ] && set -- "$@" "$mono/$f"
    done
fi
exec python3 "$here/ildiff.py" --tool monodis --peer monodis --mdinspect "$prog" "$@"

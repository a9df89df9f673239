#!/bin/sh
# Type names as a C# user types them (issue 26): `type int` (C#'s keywords
# for the built-in types), `Dictionary<TKey,TValue>.Enumerator` and
# `List<T>.Enumerator` (C#'s form of a nested type of a generic one), and
# `KeyCollection` (a nested type by its own name: several enclosing types
# have one, so they are listed), and arrays (`string[]`, `int[,][]`: the
# element type's), on Mono's mscorlib, which defines them.
# The fixtures' nested types are in the golden case type-csharp.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
corlib=/usr/lib/mono/4.5/mscorlib.dll
[ -x "$prog" ] || { echo "type-names.sh: $prog is not built" >&2; exit 99; }
[ -r "$corlib" ] || { echo "type-names.sh: $corlib is not there (Debian mono-devel)" >&2; exit 77; }
. "$top/tests/common/check.sh"
check() { # check WHAT TYPE-ARG EXPECTED-TEXT
    out=$("$prog" -c "type '$2'" "$corlib" 2>&1)
    if printf '%s\n' "$out" | grep -qF -- "$3"; then
        check_pass "$1"
    else
        check_fail "$1: type '$2' did not print \"$3\""
        printf '%s\n' "$out" | head -3 | sed 's/^/    | /'
    fi
}
check "int is System.Int32" int "name:               System.Int32"
check "string is System.String" string "System.String"
check "string[] is an array of System.String" 'string[]' "element: string"
check "string[]'s element type follows" 'string[]' "name:               System.String"
check "int[,][] is an array, its brackets said" 'int[,][]' "suffix:  [,][]"
check "an array of a nested type, C#'s form" 'List<T>.Enumerator[]' "name:         System.Collections.Generic.List+Enumerator<T>"
check "C#'s nested form of a generic type's Enumerator" 'Dictionary<TKey,TValue>.Enumerator' \
    "System.Collections.Generic.Dictionary+Enumerator<TKey,TValue>"
check "List<T>.Enumerator" 'List<T>.Enumerator' "System.Collections.Generic.List+Enumerator<T>"
check "KeyCollection lists every enclosing type's" KeyCollection \
    "ambiguous type 'KeyCollection': #1 mscorlib.dll"
check "KeyCollection's candidates include Dictionary's" KeyCollection \
    "System.Collections.Generic.Dictionary+KeyCollection<TKey,TValue>"
check "KeyCollection's candidates include Hashtable's" KeyCollection \
    "System.Collections.Hashtable+KeyCollection"
check_done

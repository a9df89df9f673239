#!/bin/sh
# Differential test: every TypeRef and ExportedType of the Mono 4.5
# framework (/usr/lib/mono/4.5/*.dll and Facades/*.dll, one module set)
# resolved by mdtools (tests/typeref/resolve_dump) and by Mono.Cecil
# (tests/typeref/CecilDiff.cs, compiled here with mcs, run with mono, its
# assembly resolver restricted to the same files). A row passes when both
# name the same assembly and full name, or both leave it unresolved; rows
# listed in tests/typeref/cecil-exceptions.txt (documented cases where Cecil
# is wrong) pass when mdtools gives the answer written there. Without mono,
# mcs, Cecil or the framework the test is skipped (exit 77, the reason on
# stderr; tests/summary.sh still counts it as failed for CI). Prints
# "N passed, M failed" (rows) through tests/common/check.sh.
top=${MDT_TOP_SRCDIR:-.}
build=${MDT_BUILDDIR:-.}
fx=${MONO_45_DIR:-/usr/lib/mono/4.5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$top/tests/common/check.sh"
fail() {
    check_fail "$*"
    check_done
}
skip() { check_skip "$*"; }
for tool in mcs mono; do
    command -v "$tool" >/dev/null 2>&1 || skip "$tool not found (apt-get install mono-devel)"
done
cecil=$(pkg-config --variable=assemblies_dir mono-cecil 2>/dev/null)/Mono.Cecil.dll
[ -f "$cecil" ] || cecil=/usr/lib/mono-cecil/Mono.Cecil.dll
[ -f "$cecil" ] || skip "Mono.Cecil.dll not found (apt-get install libmono-cecil-cil-dev)"
[ -d "$fx/Facades" ] || skip "$fx/Facades not found (apt-get install mono-runtime)"
dump="$build/tests/typeref/resolve_dump"
[ -x "$dump" ] || fail "$dump not built"

cp "$cecil" "$tmp/" || fail "cannot copy $cecil"
mcs -nologo -r:"$tmp/Mono.Cecil.dll" -out:"$tmp/CecilDiff.exe" "$top/tests/typeref/CecilDiff.cs" \
    >"$tmp/mcs.log" 2>&1 || { cat "$tmp/mcs.log"; fail "mcs failed"; }

files=$(ls "$fx"/*.dll "$fx"/Facades/*.dll | LC_ALL=C sort)
# shellcheck disable=SC2086
mono "$tmp/CecilDiff.exe" $files >"$tmp/cecil.txt" 2>"$tmp/cecil.err" || fail "CecilDiff failed"
# shellcheck disable=SC2086
"$dump" $files >"$tmp/ours.txt" 2>"$tmp/ours.err" || fail "resolve_dump failed"

grep -v '^#' "$top/tests/typeref/cecil-exceptions.txt" 2>/dev/null | grep . >"$tmp/exc.txt"
awk -v exc="$tmp/exc.txt" -v ours="$tmp/ours.txt" -v counts="$tmp/counts" '
    function norm(line,   f, n) {
        n = split(line, f, " ")
        if (f[3] == "-") return "- unresolved"
        return f[3] " " f[4]
    }
    BEGIN {
        while ((getline l < exc) > 0) { split(l, f, " "); want[f[1] " " f[2]] = f[3] " " f[4] }
        while ((getline l < ours) > 0) { split(l, f, " "); o[f[1] " " f[2]] = norm(l); seen[f[1] " " f[2]] = 1 }
    }
    {
        key = $1 " " $2
        c = norm($0)
        if (!(key in o)) { printf "FAIL %s: only Cecil answers (%s)\n", key, c; bad++; next }
        delete seen[key]
        if (c == o[key]) { good++; next }
        if ((key in want) && want[key] == o[key]) { good++; known++; next }
        printf "FAIL %s: Cecil %s, mdtools %s\n", key, c, o[key]
        bad++
    }
    END {
        for (k in seen) { printf "FAIL %s: only mdtools answers (%s)\n", k, o[k]; bad++ }
        printf "# %d rows agree (%d through documented exceptions)\n", good - known, known
        print good + 0, bad + 0 > counts
    }' "$tmp/cecil.txt" || fail "awk failed"
# Rows agree by the thousand: counted, not a line each.
[ -s "$tmp/counts" ] || fail "no counts from the comparison"
check_add $(cat "$tmp/counts")
check_done

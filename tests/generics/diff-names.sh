#!/bin/sh
# Differential test of mdtools' names against Mono.Cecil (issue 4): every
# TypeSpec, MethodSpec and TypeSpec-parented MemberRef of each file of the
# Mono 4.5 framework (and of data/Sigs.dll, data/Everything.dll) must print
# the same in doc/names.md's full style, by mdtools (md-names) and by Cecil
# (cecil-names.cs, compiled here with mcs, run with mono). Differences where
# Cecil is wrong per ECMA-335 are documented in tests/generics/README.md and
# excluded by the exact rules below, nothing else. Without mono, mcs, Cecil
# or the Mono framework the test is skipped (exit 77, the reason on
# stderr). Prints one line per file and "N passed, M failed" (files).
top=${MDT_TOP_SRCDIR:-.}
build=${MDT_BUILDDIR:-.}
fw=${MDT_MONO_45_DIR:-/usr/lib/mono/4.5}

. "$top/tests/common/check.sh"
fail() {
    check_fail "$*"
    check_done
}
skip() { check_skip "$*"; }

command -v mono >/dev/null 2>&1 || skip "mono not found (Debian package mono-runtime)"
command -v mcs >/dev/null 2>&1 || skip "mcs not found (Debian package mono-mcs)"
# Cecil from Debian's libmono-cecil-cil-dev: its mono-cecil.pc names the dll.
pc=$(dpkg -L libmono-cecil-cil-dev 2>/dev/null | grep '/mono-cecil\.pc$' | head -n 1)
cecil_dir=
[ -n "$pc" ] && cecil_dir=$(sed -n 's/^assemblies_dir=\${prefix}//p' "$pc" | head -n 1)
[ -n "$cecil_dir" ] && cecil_dir=$(sed -n 's/^prefix=//p' "$pc" | head -n 1)$cecil_dir
cecil=$cecil_dir/Mono.Cecil.dll
[ -f "$cecil" ] || skip "Mono.Cecil.dll not found (Debian package libmono-cecil-cil-dev)"
[ -x "$build/tests/generics/md-names" ] || fail "$build/tests/generics/md-names not built"
[ -f "$fw/mscorlib.dll" ] || skip "no Mono 4.5 framework in $fw (Debian package mono-devel)"

work=$(mktemp -d "${TMPDIR:-/tmp}/diff-names.XXXXXX") || fail "cannot create a work directory"
trap 'rm -rf "$work"' EXIT
mcs -nologo -debug- -optimize+ -r:"$cecil" -out:"$work/cecil-names.exe" \
    "$top/tests/generics/cecil-names.cs" > "$work/mcs.log" 2>&1 ||
    { cat "$work/mcs.log"; fail "mcs could not compile cecil-names.cs"; }

set -- "$fw"/*.dll "$fw"/Facades/*.dll "$top/data/Sigs.dll" "$top/data/Everything.dll"
MONO_PATH=$cecil_dir mono "$work/cecil-names.exe" "$@" > "$work/cecil.txt" 2> "$work/cecil.err" ||
    { head -n 20 "$work/cecil.err"; fail "cecil-names.exe failed"; }
"$build/tests/generics/md-names" "$@" > "$work/md.txt" 2> "$work/md.err" ||
    { head -n 20 "$work/md.err"; fail "md-names failed"; }

# Rule "cecil-signed-bound" (README.md): Cecil reads a negative one-byte
# compressed signed integer (II.23.2) in sign-magnitude, so an array lower
# bound L in -64..-1 comes out as -(L + 64), and the upper bound it derives
# from the size moves with it. Applied to mdtools' text, it must give
# Cecil's text exactly; then the difference is Cecil's.
awk -v top="$top/" '
function cecil_bounds(s,    out, lo, hi, m, t) {
    out = ""
    while (match(s, /[[,]-[0-9]+\.\.\.(-?[0-9]+)?[],]/)) {
        t = substr(s, RSTART + 1, RLENGTH - 2)
        out = out substr(s, 1, RSTART)
        s = substr(s, RSTART + RLENGTH - 1)
        split(t, m, /\.\.\./)
        lo = m[1] + 0
        if (lo < -64) { out = out t; continue }
        out = out (-(lo + 64)) "..."
        if (m[2] != "") { hi = m[2] + 0; out = out (hi - lo - (lo + 64)) }
    }
    return out s
}
FNR == 1 { file_no++ }
file_no == 1 {
    if ($1 == "F") { f = substr($0, 3); next }
    ce[f SUBSEP $2] = substr($0, length($1) + length($2) + 3)
    next
}
function report() {
    if (cur == "") return
    name = cur; sub("^" top, "", name)
    if (bad) printf "FAIL %s: %d names, %d mismatches\n", name, n, bad
    else printf "PASS %s: %d names%s\n", name, n, ex ? sprintf(", %d excluded (cecil-signed-bound)", ex) : ""
    for (i = 1; i <= shown; i++) print shown_line[i]
}
$1 == "F" { report(); cur = substr($0, 3); n = bad = ex = shown = 0; next }
$1 == "ERR" { bad++; total_bad++; shown_line[++shown] = "  mdtools cannot read the file: " $0; next }
{
    mine = substr($0, length($1) + length($2) + 3)
    key = cur SUBSEP $2
    n++; total++
    if (!(key in ce)) theirs = "(no row)"; else theirs = ce[key]
    if (mine == theirs && mine !~ /^ERR /) next
    if (mine !~ /^ERR / && cecil_bounds(mine) == theirs) { ex++; total_ex++; next }
    bad++; total_bad++
    if (shown < 10) {
        shown_line[++shown] = "  " $1 " " $2
        shown_line[++shown] = "    mdtools: " mine
        shown_line[++shown] = "    cecil:   " theirs
    }
}
END {
    report()
    printf "names compared: %d, mismatches: %d, excluded as documented Cecil errors: %d\n", total, total_bad, total_ex
}
' "$work/cecil.txt" "$work/md.txt" >"$work/result"
check_absorb "$work/result" $?
check_done

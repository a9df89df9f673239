#!/bin/sh
# mdprofile(1) against the program: every long option `mdprofile --help`
# lists is documented under OPTIONS of doc/mdprofile.1, and every option the
# manual documents is one the program accepts (--help lists it). Needs no
# dotnet.
set -u
top=${MDT_TOP_SRCDIR:?run from make check}
build=${MDT_BUILDDIR:?run from make check}
man=$top/doc/mdprofile.1
help=$("$build/profiler/mdprofile" --help) || { echo "mdprofile --help failed" >&2; exit 99; }
passed=0
failed=0
opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z-]*' | sort -u)
documented=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$man" | sed 's/\\-/-/g' |
    grep -o -- '--[a-z][a-z-]*' | sort -u)
for o in $opts; do
    if printf '%s\n' "$documented" | grep -qx -- "$o"; then
        passed=$((passed + 1)); echo "ok   $o is documented"
    else
        failed=$((failed + 1)); echo "FAIL $o is missing from OPTIONS of doc/mdprofile.1"
    fi
done
for o in $documented; do
    if printf '%s\n' "$opts" | grep -qx -- "$o"; then
        passed=$((passed + 1)); echo "ok   $o is an option"
    else
        failed=$((failed + 1)); echo "FAIL $o is documented but not in --help"
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# mdprofile(1) against the program: every long option `mdprofile --help`
# lists is documented under OPTIONS of doc/mdprofile.1, and every option the
# manual documents is one the program accepts (--help lists it). Needs no
# dotnet. A part of doc/man-check.sh, the one check of the manual pages:
# prints one line per check, no closing line.
set -u
top=${MDT_TOP_SRCDIR:?run from make check}
build=${MDT_BUILDDIR:?run from make check}
man=$top/doc/mdprofile.1
help=$("$build/profiler/mdprofile" --help) || { echo "mdprofile --help failed" >&2; exit 99; }
. "$top/tests/common/check.sh"
opts=$(printf '%s\n' "$help" | grep -o -- '--[a-z][a-z-]*' | sort -u)
documented=$(sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$man" | sed 's/\\-/-/g' |
    grep -o -- '--[a-z][a-z-]*' | sort -u)
for o in $opts; do
    if printf '%s\n' "$documented" | grep -qx -- "$o"; then
        check_pass "$o is documented"
    else
        check_fail "$o is missing from OPTIONS of doc/mdprofile.1"
    fi
done
for o in $documented; do
    if printf '%s\n' "$opts" | grep -qx -- "$o"; then
        check_pass "$o is an option"
    else
        check_fail "$o is documented but not in --help"
    fi
done
check_part

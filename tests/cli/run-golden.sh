#!/bin/sh
# Golden transcript tests of mdinspect.
#
# Each tests/cli/cases/NAME.cmd holds one command line, run from the source
# top (so paths in it, and in the transcript, are relative to the top) with
# `mdinspect` standing for the built program. Lines starting with '#' above
# it say what the case checks. NAME.out is the expected transcript: stdout
# and stderr as they interleave, and after each run of mdinspect a line
# "[exit N]" with its exit status (a line may run it several times).
# Standard input is /dev/null unless the line pipes something in, so no
# case ever starts the interactive shell.
#
# Usage: tests/cli/run-golden.sh [--update] [NAME...]
#   --update  write the actual transcripts into the .out files
#   NAME      run only these cases
# Environment: MDT_TOP_SRCDIR and MDT_BUILDDIR (exported by `make check`;
# default: this script's top and TOP/build); MDINSPECT overrides the program.
# Prints one line per case and finally "N passed, M failed"; exits 1 when a
# case failed, 99 when the program is missing.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
cases=$top/tests/cli/cases

update=no
if [ "${1:-}" = --update ]; then
    update=yes
    shift
fi
if [ ! -x "$prog" ]; then
    echo "run-golden.sh: $prog is not built" >&2
    exit 99
fi
case $prog in
    /*) ;;
    *) prog=$(pwd)/$prog ;;
esac

# Messages from the C library (strerror) in one language.
LC_ALL=C
export LC_ALL

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-golden.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

wanted() {
    [ $# -le 1 ] && return 0
    n=$1
    shift
    for w in "$@"; do
        [ "$w" = "$n" ] && return 0
    done
    return 1
}

. "$top/tests/common/check.sh"
for cmdfile in "$cases"/*.cmd; do
    [ -f "$cmdfile" ] || continue
    name=$(basename "$cmdfile" .cmd)
    wanted "$name" "$@" || continue
    line=$(grep -v '^#' "$cmdfile" | sed -n '1p')
    actual=$tmp/$name.out
    (
        cd "$top" || exit 99
        mdinspect() {
            "$prog" "$@"
            echo "[exit $?]"
        }
        eval "$line"
    ) </dev/null >"$actual" 2>&1
    expected=$cases/$name.out
    if [ "$update" = yes ]; then
        if cmp -s "$actual" "$expected"; then
            echo "same    $name"
        else
            cp "$actual" "$expected"
            echo "updated $name"
        fi
        check_count pass
    elif [ -f "$expected" ] && cmp -s "$expected" "$actual"; then
        check_pass "$name"
    else
        check_fail "$name: $line"
        if [ -f "$expected" ]; then
            diff -u "$expected" "$actual" | sed 's/^/    /'
        else
            echo "    no $name.out; run with --update to create it"
        fi
    fi
done

check_done

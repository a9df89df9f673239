#!/bin/sh
# The one check of the manual pages (issue 29: three checkers had three
# entry points), so no page can drift from what it documents. Its parts,
# each runnable alone while editing a page:
#  - doc/man3/check.sh: the library's pages against the public headers
#    (prototypes, structures, macros, enumerators, errors, sections, lint,
#    doc/local.mk's list, and the per-function links doc/man3/links.sh
#    makes at install time);
#  - tests/cli/man-check.sh: mdinspect(1) against the program (the
#    generated COMMANDS section, JSON OUTPUT against the transcripts,
#    OPTIONS against --help);
#  - tests/profiler/man-check.sh: mdprofile(1)'s OPTIONS against --help.
# Prints every part's lines and one closing "N passed, M failed"; a part
# that cannot run here (no groff) makes the whole a skip (exit 77), which
# tests/summary.sh counts as failed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
MDT_TOP_SRCDIR=$top MDT_BUILDDIR=$build
export MDT_TOP_SRCDIR MDT_BUILDDIR
. "$top/tests/common/check.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdt-man.XXXXXX") || check_error "no temporary directory"
trap 'rm -rf "$tmp"' EXIT INT TERM

for part in doc/man3/check.sh tests/cli/man-check.sh tests/profiler/man-check.sh; do
    name=$(echo "$part" | tr / -)
    sh "$top/$part" >"$tmp/$name" 2>"$tmp/$name.err"
    st=$?
    check_absorb "$tmp/$name" "$st"
    [ "$st" -eq 0 ] || sed 's/^/    ! /' "$tmp/$name.err"
done
check_done

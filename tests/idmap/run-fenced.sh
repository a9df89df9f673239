#!/bin/sh
# The stress and signal tests again with MDT_IDMAP_FENCED=1: readers fence
# after entering a section, as on a kernel without membarrier(2), instead of
# relying on the writers' membarrier (libmdtools/tokens/grace.c). Prints
# both outputs, then one closing "N passed, M failed" line for both.
bld=${MDT_BUILDDIR:-.}
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/common/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
MDT_IDMAP_FENCED=1 "$bld/tests/idmap/stress" 3000 > "$tmp/stress" 2>&1
rc1=$?
MDT_IDMAP_FENCED=1 "$bld/tests/idmap/sigtest" > "$tmp/sig" 2>&1
rc2=$?
# sigtest skips itself (77) where it cannot run (ThreadSanitizer): its
# output says why, and the stress test still counts.
[ "$rc2" -eq 77 ] && rc2=0
check_closing "$tmp/stress" "$rc1"
check_closing "$tmp/sig" "$rc2"
check_done

#!/bin/sh
# mdinspect batch is a plain filter: split across processes with GNU
# parallel (--pipe, blocks of 64 KiB, two jobs) it gives the same output as
# one process: the same bytes in text and JSON (parallel -k keeps the
# blocks' order; JSON without "pid", which a part of a log split from its
# header cannot know), the same lines once sorted in the folded format (whose
# order does not matter). Input: a log of ~12,000 lines made here from the
# fixtures (stacks, calls, allocs, errors) and, when Mono's framework is
# installed, PATH TOKEN lines over it. Skipped (77) without GNU parallel.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-parallel.sh: $prog is not built" >&2; exit 99; }
if ! parallel --version 2>/dev/null | grep -q 'GNU parallel'; then
    echo "batch-parallel.sh: GNU parallel is not installed (Debian package parallel)" >&2
    exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-par.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

in=$tmp/in.txt
i=0
while [ $i -lt 600 ]; do
    cat tests/cli/inputs/batch-log.txt tests/cli/inputs/batch-plain.txt
    i=$((i + 1))
done >"$in"
if [ -f /usr/lib/mono/4.5/mscorlib.dll ]; then
    for f in /usr/lib/mono/4.5/mscorlib.dll /usr/lib/mono/4.5/System.dll /usr/lib/mono/4.5/System.Xml.dll; do
        r=1
        while [ $r -le 2000 ]; do echo "$f 0x0600$(printf %04x $r)"; r=$((r + 7)); done
    done >>"$in"
fi
lines=$(wc -l <"$in")

status=0
for fmt in text json folded; do
    opt=
    [ $fmt = text ] || opt=--$fmt
    "$prog" batch $opt -a data -a data/pdb <"$in" >"$tmp/one.$fmt" 2>/dev/null
    if [ $fmt = folded ]; then
        parallel --pipe --block 64k -j2 "$prog" batch $opt -a data -a data/pdb <"$in" \
            >"$tmp/par.$fmt" 2>/dev/null
        sort "$tmp/one.$fmt" >"$tmp/one.sorted"
        sort "$tmp/par.$fmt" >"$tmp/par.sorted"
        same=$(cmp -s "$tmp/one.sorted" "$tmp/par.sorted" && echo yes)
    else
        parallel --pipe -k --block 64k -j2 "$prog" batch $opt -a data -a data/pdb <"$in" \
            >"$tmp/par.$fmt" 2>/dev/null
        if [ $fmt = json ]; then
            # A line's process comes from the header before it, which a
            # part of a split log has not seen: "pid" is left out.
            for f in one par; do
                sed 's/,"pid":[0-9]*//' "$tmp/$f.json" >"$tmp/$f.nopid" && mv "$tmp/$f.nopid" "$tmp/$f.json"
            done
        fi
        same=$(cmp -s "$tmp/one.$fmt" "$tmp/par.$fmt" && echo yes)
    fi
    if [ "$same" = yes ] && [ -s "$tmp/one.$fmt" ]; then
        echo "PASS parallel --pipe -j2 gives one process's $fmt output ($lines lines)"
    else
        echo "FAIL parallel --pipe -j2 gives one process's $fmt output ($lines lines)"
        diff "$tmp/one.$fmt" "$tmp/par.$fmt" | head -n 5 | sed 's/^/    | /'
        status=1
    fi
done
# The split really happened: more than one block.
blocks=$(parallel --pipe --block 64k -j2 wc -l <"$in" | wc -l)
if [ "$blocks" -gt 2 ]; then echo "PASS the input was split into $blocks blocks"; else echo "FAIL the input was split into $blocks blocks"; status=1; fi
exit $status

#!/bin/sh
# mdinspect batch numbers the lines of its input right however many
# threads resolve it: the lines of a block are counted by the thread that
# resolves it, not by the one that reads the input (issue 28), and a block
# that holds a header line ('#') is numbered when it is read. Input, made
# here: ~40,000 lines (~20 blocks) of PATH TOKEN lines with malformed lines
# at known numbers (the first line, the last, every 997th: some in each
# block) and a log header deep in it whose log has no #stats line (its
# line is in the report at the end). Checked: the line numbers in the text output and
# in the report, with 1, 2, 3 and 8 threads, and with one CPU.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-lines.sh: $prog is not built" >&2; exit 99; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-lines.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99
. "$top/tests/common/check.sh"

# The input: line numbers of the malformed lines (in every block) and of
# the header.
bad="1 2049 17000 17001 31337 40000"
bad=$(for l in $(seq 997 997 39999) $bad; do echo $l; done | sort -n -u | tr '\n' ' ')
header=33333
awk -v bad="$bad" -v header="$header" 'BEGIN {
    n = split(bad, b, " ")
    for (i = 1; i <= n; i++) isbad[b[i]] = 1
    for (l = 1; l <= 40000; l++) {
        if (l in isbad)
            print "junk"
        else if (l == header)
            print "#mdprofile 1 runtime=10.0.12 pid=77 mode=sample rate=1000 start=2026-11-25T14:21:07Z clock=cpu"
        else if (l > header)
            print "stack 1 native"
        else
            printf "data/Everything.dll 0x%08x\n", 0x06000001 + l % 5
    }
}' >"$tmp/in.txt" || exit 99

want() { # the lines the output must have, in order
    for l in $bad; do
        echo "[malformed line $l: neither a record nor MVID TOKEN nor PATH TOKEN]"
    done
}
want >"$tmp/want"
echo "mdinspect batch: the log of process 77 (header at line $header) has no #stats line" >"$tmp/want.err"

run() { # NAME CMD...
    name=$1
    shift
    "$@" <"$tmp/in.txt" >"$tmp/out" 2>"$tmp/err"
    lines=$(wc -l <"$tmp/out")
    grep '^\[malformed line' "$tmp/out" >"$tmp/got"
    grep -o '^mdinspect batch: the log of process 77 (header at line [0-9]*) has no #stats line' \
        "$tmp/err" >"$tmp/got.err"
    if [ "$lines" -eq 40000 ] && cmp -s "$tmp/want" "$tmp/got" && cmp -s "$tmp/want.err" "$tmp/got.err"; then
        check_pass "$name"
    else
        check_fail "$name: $lines output lines; malformed lines and report:" \
            "$(diff "$tmp/want" "$tmp/got" | head -10)" "$(diff "$tmp/want.err" "$tmp/got.err")"
    fi
    # the line numbers are where the malformed lines are, in the output too
    for l in $bad; do
        sed -n "${l}p" "$tmp/out" | grep -q "^\[malformed line $l:" ||
            check_fail "$name: output line $l is not its malformed line"
    done
}
for t in 1 2 3 8; do
    run "threads $t" "$prog" batch --no-progress -a data -t $t
done
if command -v taskset >/dev/null 2>&1; then
    run "one CPU" taskset -c 0 "$prog" batch --no-progress -a data
fi
check_done

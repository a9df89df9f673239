#!/bin/sh
# mdinspect batch resolves blocks of lines on several threads and writes
# them in input order: whatever the number of threads, standard output,
# standard error and the exit status are those of one thread, byte for
# byte, in every format. Inputs, made here: the batch-*.txt inputs of
# tests/cli/inputs repeated (~18,000 lines: many blocks, every kind of line
# and error); lines at the edges of the reader (a line of 70,000 bytes,
# longer than a block; lines of 2^20 - 1, 2^20 and 3 x 2^20 bytes, the last
# two cut; CRLF ends; a last line with a CR and no LF); and, when Mono's
# framework and bench/batch/gen are there, 60,000 PATH, MVID and stack
# lines over it; stacks of 255 frames whose JSON outgrows a block's
# buffer. Also: one CPU (taskset) runs as one thread does, and the input
# through a pipe reads as from a file. With MDINSPECT set to a build with
# -fsanitize=thread, a race report fails the comparison of standard error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-threads.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-threads.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-threads.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

. "$top/tests/common/check.sh"
check() { # check OK WHAT
    if [ "$1" = yes ]; then
        check_pass "$2"
    else
        check_fail "$2"
    fi
}

# run NAME INPUT ARGS...: out, err and exit status in $tmp/NAME.*
run() {
    r_name=$1 r_in=$2
    shift 2
    "$prog" batch --no-progress "$@" <"$r_in" >"$tmp/$r_name.out" 2>"$tmp/$r_name.err"
    echo $? >"$tmp/$r_name.rc"
}

same() { # same A B: the three results agree
    cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
        cmp -s "$tmp/$1.rc" "$tmp/$2.rc" && echo yes
}

mix=$tmp/mix.txt
i=0
while [ $i -lt 300 ]; do
    cat tests/cli/inputs/batch-log.txt tests/cli/inputs/batch-plain.txt \
        tests/cli/inputs/batch-malformed.txt
    i=$((i + 1))
done >"$mix"

edges=$tmp/edges.txt
python3 - "$edges" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    plain = b"data/Everything.dll 0x06000001"
    f.write(plain + b"\n")
    f.write(b"data/Everything.dll 0x06000001 " + b"x" * 70000 + b"\n")  # longer than a block
    f.write(plain + b"\r\n")
    f.write(b"x" * (2**20 - 1) + b"\n")     # the longest line kept
    f.write(b"x" * 2**20 + b"\n")           # cut
    f.write(b"data/pdb/Lines.dll 0x06000002\r\n")
    f.write(b"y" * (3 * 2**20) + b"\n")     # cut, over several reads
    f.write(b"\n\r\n")
    for k in range(2000):
        f.write(b"data/Everything.dll 0x0600%04x\n" % (k % 40 + 1))
    f.write(b"data/pdb/Lines.dll 0x06000001\r")  # no newline at the end
PY

# Stacks of 255 frames of a module with a PDB: their JSON is 4 times their
# size, so a block's output outgrows its buffer and spills in its turn.
dense=$tmp/dense.txt
python3 - "$dense" <<'PY'
import sys
f = b"c8e53984472d48f98a0624ad8d869103:0x0600000%d@0x%x"
with open(sys.argv[1], "wb") as out:
    for k in range(200):
        out.write(b"stack %d " % (k + 1) +
                  b" ".join(f % (2 + (k + i) % 3, (k * i) % 40) for i in range(255)) + b"\n")
PY

inputs="mix edges dense"
A="-a data -a data/pdb"
gen=$build/bench/batch/gen
fw=/usr/lib/mono/4.5
if [ -x "$gen" ] && [ -f "$fw/mscorlib.dll" ]; then
    files="$fw/mscorlib.dll $fw/System.dll $fw/System.Xml.dll $fw/System.Core.dll"
    { "$gen" path 30000 $files; "$gen" mvid 20000 $files; "$gen" stacks 500 20 $files; } \
        >"$tmp/fw.txt" 2>/dev/null
    inputs="$inputs fw"
    A="$A -a $fw"
else
    echo "batch-threads.sh: no Mono framework or bench/batch/gen: its lines are left out" >&2
fi

for in in $inputs; do
    fmts="text json folded speedscope top"
    [ "$in" = dense ] && fmts="text json"
    for fmt in $fmts; do
        case $fmt in
        text) opt= ;;
        top) opt="--top 20" ;;
        *) opt=--$fmt ;;
        esac
        run "$in.$fmt.1" "$tmp/$in.txt" $A $opt --threads 1
        for t in 2 3 8; do
            run "$in.$fmt.$t" "$tmp/$in.txt" $A $opt --threads $t
            check "$(same "$in.$fmt.1" "$in.$fmt.$t")" "$in, $fmt: --threads $t writes what one thread writes"
        done
    done
    if command -v taskset >/dev/null 2>&1; then
        taskset -c 0 "$prog" batch --no-progress $A <"$tmp/$in.txt" >"$tmp/one-cpu.out" \
            2>"$tmp/one-cpu.err"
        echo $? >"$tmp/one-cpu.rc"
        check "$(same "$in.text.1" one-cpu)" "$in: on one CPU, by default, as one thread"
    fi
    cat "$tmp/$in.txt" | "$prog" batch --no-progress $A --threads 2 >"$tmp/pipe.out" \
        2>"$tmp/pipe.err"
    echo $? >"$tmp/pipe.rc"
    check "$(same "$in.text.1" pipe)" "$in: read through a pipe as from a file"
done

# The edges, line by line: one output line per input line, the cut ones
# and the longest kept one said so.
n_in=$(python3 -c 'import sys; print(open(sys.argv[1],"rb").read().count(b"\n") + 1)' "$edges")
n_out=$(wc -l <"$tmp/edges.text.1.out")
check "$([ "$n_in" = "$n_out" ] && echo yes)" "edges: $n_out output lines for $n_in input lines"
sed -n '4p;5p;7p' "$tmp/edges.text.1.out" >"$tmp/edges.cut"
cat >"$tmp/edges.want" <<'EOF'
[malformed line 4: neither a record nor MVID TOKEN nor PATH TOKEN]
[malformed line 5: longer than 1 MiB]
[malformed line 7: longer than 1 MiB]
EOF
check "$(cmp -s "$tmp/edges.cut" "$tmp/edges.want" && echo yes)" \
    "edges: lines of 2^20 bytes and more are cut, 2^20 - 1 is kept"
first=$(sed -n '1p' "$tmp/edges.text.1.out")
crlf=$(sed -n '3p' "$tmp/edges.text.1.out")
check "$([ "$first" = "$crlf" ] && echo yes)" "edges: a CRLF line reads as its LF twin ($crlf)"
last=$(tail -n 1 "$tmp/edges.text.1.out")
check "$([ "$last" = "Lines.Calc::Add (/_/src/pdb/Lines.cs:14)" ] && echo yes)" \
    "edges: the last line without a newline is resolved ($last)"

check_done

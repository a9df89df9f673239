#!/bin/sh
# mdinspect batch with more than one thread reads a regular file in byte
# ranges, each worker its own (run.c, mdb_read_range): a line belongs to
# the range it starts in. Whatever the range size, standard output,
# standard error and the exit status are those of one thread reading the
# file (the main thread's reads) and of two threads reading it through a
# pipe. MDINSPECT_BATCH_RANGE makes the ranges a few bytes, so that on
# small inputs a range's edge falls on every byte: inside a line, on a
# newline, inside a header, at a process's start (concatenated logs, one
# cut inside a line with the next header after it), and the last line
# without a newline. Also: lines of 2^20 bytes and more across ranges (cut
# lines, one that ends the input without a newline), an input that starts
# in the middle of its file (the file offset is where it starts), and a
# file grown and one truncated while read (no crash; what is written is
# the start of the whole file's output; a truncation is an error naming
# the byte).
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-ranges.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-ranges.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-ranges.XXXXXX") || exit 99
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

A="-a data -a data/pdb"

# run NAME INPUT RANGE ARGS...: out, err and exit status in $tmp/NAME.*
run() {
    r_name=$1 r_in=$2 r_range=$3
    shift 3
    MDINSPECT_BATCH_RANGE=$r_range "$prog" batch --no-progress $A "$@" <"$r_in" \
        >"$tmp/$r_name.out" 2>"$tmp/$r_name.err"
    echo $? >"$tmp/$r_name.rc"
}

same() { # same A B: the three results agree
    cmp -s "$tmp/$1.out" "$tmp/$2.out" && cmp -s "$tmp/$1.err" "$tmp/$2.err" &&
        cmp -s "$tmp/$1.rc" "$tmp/$2.rc" && echo yes
}

# Concatenated logs: a whole one, plain and malformed lines, one cut inside
# a line with the next header appended to it, events and thread names,
# CRLF ends, blank lines, and a last plain line with no newline.
python3 - "$tmp/small.txt" tests/cli/inputs <<'PY'
import sys
d = sys.argv[2]
r = lambda n: open(d + "/" + n, "rb").read()
log, plain, bad = r("batch-log.txt"), r("batch-plain.txt"), r("batch-malformed.txt")
with open(sys.argv[1], "wb") as f:
    f.write(log + plain + bad)
    f.write(log[: len(log) - 40])  # cut inside its last line: the next header follows
    f.write(r("batch-events.txt") + r("batch-astack-threads.txt"))
    f.write(b"data/Everything.dll 0x06000001\r\n\n\r\n" + log)
    f.write(b"data/Everything.dll 0x06000002")
PY

for fmt in text json folded; do
    case $fmt in
    text) opt= ;;
    *) opt=--$fmt ;;
    esac
    run "small.$fmt.ref" "$tmp/small.txt" 65536 $opt --threads 1
    cat "$tmp/small.txt" | "$prog" batch --no-progress $A $opt --threads 2 \
        >"$tmp/small.$fmt.pipe.out" 2>"$tmp/small.$fmt.pipe.err"
    echo $? >"$tmp/small.$fmt.pipe.rc"
    check "$(same "small.$fmt.ref" "small.$fmt.pipe")" \
        "small, $fmt: two threads through a pipe write what one thread writes"
    bad=
    for r in 1 2 3 5 7 13 31 64 100 257 1000 4096 65536; do
        for t in 2 3; do
            run "small.$fmt.r$r" "$tmp/small.txt" $r $opt --threads $t
            [ "$(same "small.$fmt.ref" "small.$fmt.r$r")" = yes ] || bad="$bad $r/$t"
        done
    done
    check "$([ -z "$bad" ] && echo yes)" \
        "small, $fmt: ranges of 1 to 65536 bytes, 2 and 3 threads, write what one thread writes${bad:+ (differ:$bad)}"
done
check "$(grep -q 'another log.s header follows' "$tmp/small.text.ref.out" && echo yes)" \
    "small: the input has a log cut with the next header inside the line"

# Lines of 2^20 bytes and more (cut: only their number is written) across
# ranges of up to 2^19 bytes; one input ends with a cut line without a
# newline, the other with a short one and a CR.
python3 - "$tmp/long1.txt" "$tmp/long2.txt" <<'PY'
import sys
plain = b"data/Everything.dll 0x06000001"
body = (plain + b"\n" + b"x" * (2**20 - 1) + b"\n" + plain + b"\r\n" + b"x" * 2**20 + b"\n" +
        b"#mdprofile 1 pid=7 " + b"y" * (3 * 2**20) + b"\n" + plain + b"\n" +
        b"".join(b"data/Everything.dll 0x0600%04x\n" % (k % 40 + 1) for k in range(3000)))
open(sys.argv[1], "wb").write(body + b"z" * (2**20 + 5))
open(sys.argv[2], "wb").write(body + b"z" * (2**20 - 2) + b"\n" + plain + b"\r")
PY
for in in long1 long2; do
    run "$in.ref" "$tmp/$in.txt" 65536 --threads 1
    bad=
    for r in 4093 65536 333333 524288; do
        run "$in.r$r" "$tmp/$in.txt" $r --threads 2
        [ "$(same "$in.ref" "$in.r$r")" = yes ] || bad="$bad $r"
    done
    check "$([ -z "$bad" ] && echo yes)" \
        "$in: lines of 2^20 bytes and more across ranges write what one thread writes${bad:+ (differ:$bad)}"
done
check "$(grep -c 'longer than 1 MiB' "$tmp/long1.ref.out" | grep -qx 3 && echo yes)" \
    "long1: three lines cut, the last one without a newline"

# An input that starts in the middle of its file: read from there, as a
# pipe of the same bytes is.
off=1234
python3 - "$tmp/small.txt" "$off" "$prog" $A --threads 2 <<'PY' >"$tmp/mid.out" 2>"$tmp/mid.err"
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.lseek(fd, int(sys.argv[2]), 0)
os.dup2(fd, 0)
os.environ["MDINSPECT_BATCH_RANGE"] = "37"
os.execv(sys.argv[3], [sys.argv[3], "batch", "--no-progress"] + sys.argv[4:])
PY
echo $? >"$tmp/mid.rc"
tail -c +$((off + 1)) "$tmp/small.txt" | "$prog" batch --no-progress $A --threads 1 \
    >"$tmp/midpipe.out" 2>"$tmp/midpipe.err"
echo $? >"$tmp/midpipe.rc"
check "$(same mid midpipe)" "an input opened at byte $off is read from there"

# A file grown and one truncated while read: never a crash; every line
# written but the last is the whole file's line; a truncation met is an
# error naming the byte. (Which lines a run meets depends on timing: the
# checks hold for all.)
python3 - "$tmp/big.txt" <<'PY'
import sys
with open(sys.argv[1], "wb") as f:
    for k in range(150000):
        f.write(b"data/Everything.dll 0x0600%04x\n" % (k % 40 + 1))
PY
cp "$tmp/big.txt" "$tmp/whole.txt"
cat "$tmp/big.txt" "$tmp/big.txt" >"$tmp/grown-whole.txt"
run whole "$tmp/grown-whole.txt" 65536 --threads 1
prefix() { # prefix OUT: OUT's lines but its last start whole's output
    python3 - "$tmp/$1.out" "$tmp/whole.out" <<'PY' && echo yes
import sys
a = open(sys.argv[1], "rb").read().split(b"\n")[:-2]
b = open(sys.argv[2], "rb").read().split(b"\n")
sys.exit(0 if a == b[: len(a)] else 1)
PY
}
cp "$tmp/big.txt" "$tmp/grow.txt"
MDINSPECT_BATCH_RANGE=64 "$prog" batch --no-progress $A --threads 2 <"$tmp/grow.txt" \
    >"$tmp/grow.out" 2>"$tmp/grow.err" &
pid=$!
cat "$tmp/big.txt" >>"$tmp/grow.txt"
wait $pid
rc=$?
check "$([ $rc -lt 128 ] && [ "$(prefix grow)" = yes ] && echo yes)" \
    "a file grown while read: status $rc, its lines the start of the whole output"
n=$(wc -l <"$tmp/grow.out")
check "$([ "$n" -ge 150000 ] && echo yes)" "a file grown while read: $n lines, at least the first 150000"

cp "$tmp/big.txt" "$tmp/shrink.txt"
MDINSPECT_BATCH_RANGE=64 "$prog" batch --no-progress $A --threads 2 <"$tmp/shrink.txt" \
    >"$tmp/shrink.out" 2>"$tmp/shrink.err" &
pid=$!
python3 -c 'import os, sys; os.truncate(sys.argv[1], 1000017)' "$tmp/shrink.txt"
wait $pid
rc=$?
ok=no
if [ $rc -lt 128 ] && [ "$(prefix shrink)" = yes ]; then
    if grep -q "shrank while it was read: byte [0-9]*, which it had, was gone" "$tmp/shrink.err"; then
        [ $((rc & 1)) = 1 ] && ok=yes
        echo "batch-ranges.sh: the truncation was met: $(cat "$tmp/shrink.err")" >&2
    else
        ok=yes
    fi
fi
check "$ok" "a file truncated while read: status $rc, its lines the start of the whole output"

# An output that fails (/dev/full): the run stops, the blocks read already
# resolved and dropped unwritten (run.c, stop_unwritten), in ranges (a file,
# ranges of 64 bytes and the default) and in blocks (a pipe), with 1 to 3
# threads: it ends (within 120 s), status 1, the error said once.
if [ -w /dev/full ]; then
    bad=
    for t in 1 2 3; do
        for how in file64 file pipe; do
            case $how in
            file64) MDINSPECT_BATCH_RANGE=64 timeout 120 "$prog" batch --no-progress $A \
                --threads $t <"$tmp/big.txt" >/dev/full 2>"$tmp/full.err" ;;
            file) timeout 120 "$prog" batch --no-progress $A --threads $t <"$tmp/big.txt" \
                >/dev/full 2>"$tmp/full.err" ;;
            pipe) cat "$tmp/big.txt" | timeout 120 "$prog" batch --no-progress $A --threads $t \
                >/dev/full 2>"$tmp/full.err" ;;
            esac
            rc=$?
            [ $rc = 1 ] && [ "$(cat "$tmp/full.err")" = "mdinspect batch: error writing the output" ] ||
                bad="$bad $how/$t:$rc"
        done
    done
    check "$([ -z "$bad" ] && echo yes)" \
        "an output that fails stops the run: status 1, the error once${bad:+ (not:$bad)}"
else
    echo "batch-ranges.sh: /dev/full is not there: the failing output not tried" >&2
fi

check_done

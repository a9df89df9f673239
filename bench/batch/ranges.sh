#!/bin/sh
# Issue 28, branch batchio: `mdinspect batch` on a regular file, before
# (the main thread reads every block) and after (each worker preads its
# own range), taking turns. Per round and variant: wall, user and system
# CPU (/usr/bin/time) with -t 1 and -t 2, to /dev/null and to a file; and
# once per variant, the CPU share of each thread (perf's cpu-clock samples
# by thread id; the main thread's id is the process's).
#
#   OLD=DIR NEW=DIR IN=FILE ROUNDS=5 OUT=FILE bench/batch/ranges.sh
#
# DIR holds an mdinspect binary and its libmdtools.so.1 (a build's
# mdinspect/.libs and libmdtools/.libs copied together); IN is e.g.
# `bench/batch/gen path 10000000 FILES...` over Mono's 4.5 framework; OUT
# is where the runs to a file write (default: a file under TMPDIR).
set -u
: "${OLD:?OLD=DIR: the mdinspect before}" "${NEW:?NEW=DIR: the mdinspect after}"
: "${IN:?IN=FILE: the input}"
ROUNDS=${ROUNDS:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/ranges.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
OUT=${OUT:-$tmp/out.txt}

run() { # run DIR THREADS DEST: one line "wall user sys"
    LD_LIBRARY_PATH=$1 /usr/bin/time -f "%e %U %S" -o "$tmp/t" \
        "$1/mdinspect" batch --no-progress -t "$2" <"$IN" >"$3"
    cat "$tmp/t"
}

echo "# round variant threads dest wall user sys"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    for t in 1 2; do
        for dest in /dev/null "$OUT"; do
            d=null
            [ "$dest" = /dev/null ] || d=file
            for v in old new; do
                [ $v = old ] && dir=$OLD || dir=$NEW
                echo "$r $v $t $d $(run "$dir" $t "$dest")"
            done
        done
    done
    r=$((r + 1))
done

if command -v perf >/dev/null 2>&1; then
    for v in old new; do
        [ $v = old ] && dir=$OLD || dir=$NEW
        for dest in /dev/null "$OUT"; do
            LD_LIBRARY_PATH=$dir perf record -q -e cpu-clock -F 4000 -o "$tmp/perf.data" \
                "$dir/mdinspect" batch --no-progress -t 2 <"$IN" >"$dest" 2>/dev/null
            echo "# perf $v -t 2 to $dest: samples by thread"
            perf report -i "$tmp/perf.data" --sort pid --stdio 2>/dev/null | grep '%'
        done
    done
fi

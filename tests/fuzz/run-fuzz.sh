#!/bin/sh
# `make fuzz`: run every registered libFuzzer harness for a fixed time on a
# scratch copy of its seed corpus; a crash, leak, timeout or out-of-memory
# fails the run. Harnesses register in any local.mk with
#     FUZZ_RUNS += PROGRAM=CORPUSDIR
# (PROGRAM in the build tree, CORPUSDIR relative to the source tree).
#
# Usage (from the build tree's top, as the fuzz rule calls it):
#   run-fuzz.sh SECONDS SRCDIR MAKE PROGRAM=CORPUS...
# Per harness, under tests/fuzz/fuzz-runs/NAME/ of the build tree:
# corpus/ (the seeds, then what libFuzzer adds), artifacts/ (crash-*,
# leak-*, timeout-*, oom-*: reproduce with `PROGRAM ARTIFACT`), log.
# A dictionary is used when the harness's folder in the source tree has
# NAME.dict, NAME being the program's name without "fuzz_" (image.dict for
# fuzz_image). FUZZ_FLAGS adds libFuzzer options.
set -u
seconds=$1
srcdir=$2
make=$3
shift 3
if [ $# -eq 0 ]; then
    echo "make fuzz: no harness registered (FUZZ_RUNS is empty)" >&2
    exit 1
fi

progs=
for run in "$@"; do
    progs="$progs ${run%%=*}"
done
# Build what is not built yet (the fuzzers are not part of `make all`
# unless configured with --enable-fuzzing, which the rule checked).
# shellcheck disable=SC2086
$make $progs || exit 1

MDT_TOP_SRCDIR=$(cd "$srcdir" && pwd)
export MDT_TOP_SRCDIR
work=tests/fuzz/fuzz-runs
failed=0
summary=
for run in "$@"; do
    prog=${run%%=*}
    corpus=$MDT_TOP_SRCDIR/${run#*=}
    name=$(basename "$prog")
    dir=$work/$name
    rm -rf "$dir"
    mkdir -p "$dir/corpus" "$dir/artifacts" || exit 1
    if [ ! -d "$corpus" ]; then
        echo "make fuzz: $name: no corpus $corpus" >&2
        failed=$((failed + 1))
        continue
    fi
    cp -R "$corpus/." "$dir/corpus/"
    dict=$MDT_TOP_SRCDIR/$(dirname "$prog")/${name#fuzz_}.dict
    set --
    [ -r "$dict" ] && set -- "-dict=$dict"
    echo "make fuzz: $name for ${seconds}s on $dir/corpus"
    # shellcheck disable=SC2086
    "$prog" "$@" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -malloc_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$dir/artifacts/" \
        ${FUZZ_FLAGS:-} "$dir/corpus" >"$dir/log" 2>&1
    rc=$?
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
    cov=$(sed -n 's/^#[0-9]*[[:space:]]*DONE[[:space:]]*cov: \([0-9]*\).*/\1/p' "$dir/log" | tail -n 1)
    found=$(ls "$dir/artifacts" | wc -l)
    if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
        failed=$((failed + 1))
        echo "make fuzz: $name FAILED (exit $rc); artifacts in $dir/artifacts, log $dir/log:" >&2
        grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$dir/log" | head -n 5 >&2
        ls "$dir/artifacts" >&2
        summary="$summary
  $name: FAILED, ${execs:-?} runs, coverage ${cov:-?}"
    else
        summary="$summary
  $name: ok, ${execs:-?} runs, coverage ${cov:-?}"
    fi
done
echo "make fuzz: ${seconds}s per harness:$summary"
[ "$failed" -eq 0 ] || exit 1

#!/bin/sh
# Build the profiler's core and libmdtools with -fsanitize=thread into a
# temporary directory, with the race tests (race_seqs.c: sequence holds and
# the retire watermark; race_drain.c: the rings, the drain thread's wait,
# wake and final flush; race_wall.c: the wall thread signalling threads that
# come and go), and run them. Passes when every invariant holds and
# ThreadSanitizer reports nothing. Skips (exit 77) when the compiler cannot
# build with TSan.
#
# With --mutants it then builds copies of the core with one ordering or
# check broken at a time (each mutant below: a sed expression on one file)
# and expects each to fail, by a broken invariant or a TSan report: the
# tests can fail, and each mutant says what they catch.
#
# Usage: run-race-tsan.sh [--mutants]   (MDT_TOP_SRCDIR: source tree,
# default the one this script is in; RACE_SCALE: 1 by default, more for
# longer runs)
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
cc=${CC:-gcc}
scale=${RACE_SCALE:-1}
mutants=0
[ "${1:-}" = --mutants ] && mutants=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! echo 'int main(void){return 0;}' | $cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null ||
   ! "$tmp/probe"; then
    echo "ThreadSanitizer not available with $cc: skipped"
    exit 77
fi
if ! pkg-config --exists talloc nettle zlib libxxhash 2>/dev/null; then
    echo "talloc, nettle, zlib or xxhash development files not found by pkg-config: skipped"
    exit 77
fi
: > "$tmp/config.h"
# shellcheck disable=SC2046
cflags="-std=gnu11 -O1 -g -fsanitize=thread -Wno-tsan -pthread -I$tmp -I$top/libmdtools/include
    -I$top/libmdtools -I$top/profiler $(pkg-config --cflags talloc nettle zlib libxxhash)"
libs="$(pkg-config --libs talloc nettle zlib) -lgmp -ldl -lrt -lm"
tests="race_seqs race_drain race_wall race_perf"
[ -f "$top/tests/profiler/race_perf.c" ] || tests="race_seqs race_drain race_wall"

# Objects: the library once, the core per variant (a mutant recompiles
# the core only), two compilers at a time. INC comes first: a mutant's
# copy of the core's headers wins over the tree's.
compile() { # outdir inc sources...
    out=$1
    inc=$2
    shift 2
    mkdir -p "$out"
    n=0
    for f in "$@"; do
        o="$out/$(echo "$f" | tr / _ | sed 's/\.c$/.o/')"
        # shellcheck disable=SC2086
        { $cc $inc $cflags -c "$f" -o "$o" 2>> "$out/build.log" || echo "$f" >> "$out/failed"; } &
        n=$((n + 1))
        [ $((n % 2)) -eq 0 ] && wait
    done
    wait
    [ ! -f "$out/failed" ]
}
if ! compile "$tmp/lib" "" "$top"/libmdtools/*/*.c; then
    cat "$tmp/lib/build.log"
    echo "0 passed, 1 failed"
    exit 1
fi

# variant DIR COREDIR [FILE]: compile the core from COREDIR (the tree's,
# or a mutant's copy: then only FILE when it is a .c file, the others
# taken from the tree's build) and link the tests into DIR.
variant() {
    dir=$1
    coredir=$2
    only=${3:-}
    case $only in
    *.c)
        mkdir -p "$dir/obj"
        cp "$tmp"/real/obj/*.o "$dir/obj/"
        rm -f "$dir/obj/$(echo "$top/profiler/core/$only" | tr / _ | sed 's/\.c$/.o/')"
        set -- "$coredir/$only"
        ;;
    *) set -- "$coredir"/*.c ;;
    esac
    if ! compile "$dir/obj" "-I$coredir/.." "$@"; then
        cat "$dir/obj/build.log"
        return 1
    fi
    for t in $tests; do
        # shellcheck disable=SC2086
        $cc -I"$coredir/.." $cflags "$top/tests/profiler/$t.c" "$dir"/obj/*.o "$tmp"/lib/*.o \
            $libs -o "$dir/$t" 2>> "$dir/build.log" || {
            cat "$dir/build.log"
            return 1
        }
    done
}

# run DIR NAME ARGS...: one test under TSan; sets rc and reports.
run() {
    dir=$1
    name=$2
    shift 2
    start=$(date +%s)
    TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0 ${TSAN_OPTIONS:-}" \
        "$dir/$name" "$@" > "$dir/$name.out" 2> "$dir/$name.err"
    rc=$?
    end=$(date +%s)
    reports=$(grep -c '^WARNING: ThreadSanitizer' "$dir/$name.err")
}

args_race_seqs="$((5000 * scale)) 6"
args_race_drain="$((4 * scale)) 4 400"
args_race_wall="$((3 * scale))"
args_race_perf="$((3 * scale))"

# The core as it is: every invariant holds, no report.
if ! variant "$tmp/real" "$top/profiler/core"; then
    echo "0 passed, 1 failed"
    exit 1
fi
failed=0
passed=0
for t in $tests; do
    eval "args=\$args_$t"
    # shellcheck disable=SC2086
    run "$tmp/real" "$t" $args
    cat "$tmp/real/$t.out"
    echo "TSan, $t: exit $rc, $reports reports, $((end - start)) s"
    if [ "$rc" -eq 77 ] && [ "$reports" -eq 0 ]; then
        echo "TSan, $t: skipped (it says why above), not counted"
    elif [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; then
        head -n 80 "$tmp/real/$t.err"
        failed=$((failed + 1))
    else
        passed=$((passed + 1))
    fi
done

if [ "$mutants" -eq 1 ]; then
    # NAME FILE TEST SED: the core with FILE changed by SED must fail TEST.
    # A SED that no longer changes FILE (the code moved) fails too: update it.
    mutant() {
        mname=$1
        file=$2
        test=$3
        expr=$4
        mdir="$tmp/m-$mname"
        mkdir -p "$mdir/src"
        cp -r "$top/profiler/core" "$mdir/src/core"
        sed -e "$expr" "$top/profiler/core/$file" > "$mdir/src/core/$file"
        if cmp -s "$top/profiler/core/$file" "$mdir/src/core/$file"; then
            echo "mutant $mname: '$expr' changes nothing in $file: FAILED (update the mutant)"
            failed=$((failed + 1))
            return
        fi
        if ! variant "$mdir" "$mdir/src/core" "$file"; then
            echo "mutant $mname: does not build: FAILED"
            failed=$((failed + 1))
            return
        fi
        eval "args=\$args_$test"
        # shellcheck disable=SC2086
        run "$mdir" "$test" $args
        why=$(grep -m1 'FAIL:' "$mdir/$test.err" | sed 's/^[^ ]* FAIL: //')
        [ -n "$why" ] || why=$(grep -m1 -A2 '^WARNING: ThreadSanitizer' "$mdir/$test.err" |
            tr '\n' ' ')
        if [ "$rc" -eq 0 ] && [ "$reports" -eq 0 ]; then
            echo "mutant $mname ($file): $test passed: NOT CAUGHT"
            failed=$((failed + 1))
        else
            echo "mutant $mname ($file): caught by $test, $reports TSan reports: $why" | cut -c1-300
            passed=$((passed + 1))
        fi
    }
    . "$top/tests/profiler/race-mutants.sh"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

#!/bin/sh
# Build the runtime-ID map sources with -fsanitize=thread into a temporary
# directory, with two tests, and run them: stress.c (8 readers, 3 writers,
# 10,000 load/unload cycles reusing the same IDs, then 600 short-lived
# readers) and shortlived.c (300 detached short-lived readers, more than
# the 256 reader slots, whose reads only the map orders before the frees)
# and appendrace.c (readers racing code ranges appended in place).
# Passes when both see no stale or torn answer and ThreadSanitizer reports
# nothing. Skips (exit 77) when the compiler cannot build with TSan.
# Usage: run-tsan.sh [cycles]   (MDT_TOP_SRCDIR: source tree, default: the
# one this script is in)
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/common/check.sh"
cc=${CC:-gcc}
cycles=${1:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/config.h"
if ! echo 'int main(void){return 0;}' | $cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null ||
   ! "$tmp/probe"; then
    echo "ThreadSanitizer not available with $cc: skipped"
    exit 77
fi
# The map's sources; names.c only turns the map's descriptions into names
# through the generics formatter (talloc, images) and is not needed here.
srcs=
for f in "$top"/libmdtools/tokens/*.c; do
    case $f in
    */names.c) ;;
    *) srcs="$srcs $f" ;;
    esac
done
build() { # test.c output
    # shellcheck disable=SC2086
    $cc -std=gnu11 -O1 -g -fsanitize=thread -Wno-tsan -pthread -I"$tmp" \
        -I"$top/libmdtools/include" -I"$top/libmdtools" $srcs "$top/libmdtools/util/error.c" \
        "$1" -o "$2" 2>> "$tmp/build.log"
}
if ! build "$top/tests/idmap/stress.c" "$tmp/stress" ||
   ! build "$top/tests/idmap/shortlived.c" "$tmp/shortlived" ||
   ! build "$top/tests/idmap/appendrace.c" "$tmp/appendrace"; then
    cat "$tmp/build.log"
    check_fail "the tests build with -fsanitize=thread"
    check_done
fi
run() { # name command...
    name=$1
    shift
    start=$(date +%s)
    TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0 ${TSAN_OPTIONS:-}" \
        "$@" > "$tmp/out" 2> "$tmp/err"
    rc=$?
    end=$(date +%s)
    cat "$tmp/out"
    reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/err")
    if [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; then
        check_fail "TSan, $name: exit $rc, $reports reports, $((end - start)) s"
        head -n 60 "$tmp/err"
    else
        check_pass "TSan, $name: exit $rc, $reports reports, $((end - start)) s"
    fi
}
run stress "$tmp/stress" "$cycles" 8 3
run shortlived "$tmp/shortlived"
run appendrace "$tmp/appendrace"
check_done

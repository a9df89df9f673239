#!/bin/sh
# Build libmdtools and tests/unit/lazy_threads.c with -fsanitize=thread into
# a temporary directory and run it: threads race through the checks open
# leaves to first need (sorted tables, run and Ptr indexes, late warnings;
# libmdtools/md/lazy.c). Passes when every thread agrees with a lone reader
# and ThreadSanitizer reports nothing. Skips (exit 77) when the compiler
# cannot build with TSan.
# Usage: run-lazy-tsan.sh [rounds]   (MDT_TOP_SRCDIR: source tree, default .)
top=${MDT_TOP_SRCDIR:-.}
. "$top/tests/common/check.sh"
cc=${CC:-gcc}
rounds=${1:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! echo 'int main(void){return 0;}' | $cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null ||
   ! "$tmp/probe"; then
    check_skip "ThreadSanitizer not available with $cc"
fi
if ! pkg-config --exists talloc nettle zlib 2>/dev/null; then
    check_skip "talloc, nettle or zlib development files not found by pkg-config"
fi
: > "$tmp/config.h"
# shellcheck disable=SC2046
if ! $cc -std=gnu11 -O1 -g -fsanitize=thread -pthread -I"$tmp" -I"$top/libmdtools/include" \
    -I"$top/libmdtools" -I"$top/tests/common" $(pkg-config --cflags talloc nettle) \
    "$top"/libmdtools/*/*.c "$top/tests/unit/lazy_threads.c" \
    $(pkg-config --libs talloc nettle zlib) -lgmp -o "$tmp/lazy" 2> "$tmp/build.log"; then
    cat "$tmp/build.log"
    check_fail "lazy_threads builds with -fsanitize=thread"
    check_done
fi
TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}" "$tmp/lazy" "$rounds" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
cat "$tmp/out"
reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/err")
echo "TSan: exit $rc, $reports reports"
if [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; then
    head -n 60 "$tmp/err"
    check_fail "every thread agrees with a lone reader, TSan reports nothing"
else
    check_pass "every thread agrees with a lone reader, TSan reports nothing"
fi
check_done

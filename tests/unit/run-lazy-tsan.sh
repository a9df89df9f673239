#!/bin/sh
# Build libmdtools and tests/unit/lazy_threads.c with -fsanitize=thread into
# a temporary directory and run it: threads race through the checks open
# leaves to first need (sorted tables, run and Ptr indexes, late warnings;
# libmdtools/md/lazy.c). Passes when every thread agrees with a lone reader
# and ThreadSanitizer reports nothing. Skips (exit 77) when the compiler
# cannot build with TSan.
# Usage: run-lazy-tsan.sh [rounds]   (MDT_TOP_SRCDIR: source tree, default .)
top=${MDT_TOP_SRCDIR:-.}
cc=${CC:-gcc}
rounds=${1:-10}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
if ! echo 'int main(void){return 0;}' | $cc -fsanitize=thread -x c - -o "$tmp/probe" 2>/dev/null ||
   ! "$tmp/probe"; then
    echo "ThreadSanitizer not available with $cc: skipped"
    exit 77
fi
if ! pkg-config --exists talloc nettle zlib 2>/dev/null; then
    echo "talloc, nettle or zlib development files not found by pkg-config: skipped"
    exit 77
fi
: > "$tmp/config.h"
# shellcheck disable=SC2046
if ! $cc -std=gnu11 -O1 -g -fsanitize=thread -pthread -I"$tmp" -I"$top/libmdtools/include" \
    -I"$top/libmdtools" -I"$top/tests/common" $(pkg-config --cflags talloc nettle) \
    "$top"/libmdtools/*/*.c "$top/tests/unit/lazy_threads.c" \
    $(pkg-config --libs talloc nettle zlib) -lgmp -o "$tmp/lazy" 2> "$tmp/build.log"; then
    cat "$tmp/build.log"
    echo "0 passed, 1 failed"
    exit 1
fi
TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}" "$tmp/lazy" "$rounds" \
    > "$tmp/out" 2> "$tmp/err"
rc=$?
cat "$tmp/out"
reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/err")
echo "TSan: exit $rc, $reports reports"
if [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; then
    head -n 60 "$tmp/err"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"

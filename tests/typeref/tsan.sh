#!/bin/sh
# Build tests/typeref/stress.c and the library sources with
# -fsanitize=thread and run it: reader threads resolve while a writer adds
# and removes modules. Any data race ThreadSanitizer reports fails the test.
# Needs gcc (or $CC) with libtsan; its absence is a failure, not a skip.
top=${MDT_TOP_SRCDIR:-.}
build=${MDT_BUILDDIR:-.}
cc=${CC:-gcc}
. "$top/tests/common/check.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
srcs=$(ls "$top"/libmdtools/*/*.c)
if ! $cc -std=gnu11 -fsanitize=thread -g -O1 -pthread \
    -I"$top/libmdtools/include" -I"$top/libmdtools" -I"$build" -I"$top/tests/common" \
    $(pkg-config --cflags talloc nettle) \
    $srcs "$top/tests/typeref/stress.c" -o "$tmp/stress" \
    $(pkg-config --libs talloc nettle zlib) -lgmp 2> "$tmp/cc.err"; then
    cat "$tmp/cc.err"
    check_fail "the stress test builds with -fsanitize=thread"
    check_done
fi
if TSAN_OPTIONS="halt_on_error=1 exitcode=66 second_deadlock_stack=1" \
    MDT_TOP_SRCDIR="$top" "$tmp/stress" "${MDT_STRESS_SECONDS:-3}"; then
    exit 0
fi
check_fail "the stress test passes under ThreadSanitizer"
check_done

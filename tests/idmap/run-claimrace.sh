#!/bin/sh
# Build tests/idmap/claimrace.c with the runtime-ID map's sources and
# -DIDM_TEST_CLAIM_HOOK (grace.c then calls the test at the point of a
# reader-slot claim where a nested claim by a signal handler could race)
# into a temporary directory, and run it. Sources are found from this
# script's directory unless MDT_TOP_SRCDIR says otherwise.
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$top/tests/common/check.sh"
cc=${CC:-cc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/config.h"
# shellcheck disable=SC2086
if ! $cc -std=gnu11 -O1 -g -pthread -DIDM_TEST_CLAIM_HOOK $CFLAGS -I"$tmp" \
    -I"$top/libmdtools/include" -I"$top/libmdtools" "$top"/libmdtools/tokens/*.c \
    "$top/libmdtools/util/error.c" "$top/tests/idmap/claimrace.c" \
    -o "$tmp/claimrace" $LDFLAGS 2> "$tmp/build.log"; then
    cat "$tmp/build.log"
    check_fail "claimrace builds"
    check_done
fi
exec "$tmp/claimrace"

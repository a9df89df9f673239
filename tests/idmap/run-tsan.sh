#!/bin/sh
# Build the runtime-ID map sources and the stress test with
# -fsanitize=thread into a temporary directory and run it: 8 readers, 3
# writers, 10,000 load/unload cycles reusing the same IDs. Passes when the
# test sees no stale or torn answer and ThreadSanitizer reports nothing.
# Skips (exit 77) when the compiler cannot build with TSan.
# Usage: run-tsan.sh [cycles]   (MDT_TOP_SRCDIR: source tree, default .)
top=${MDT_TOP_SRCDIR:-.}
cc=${CC:-gcc}
cycles=${1:-10000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: > "$tmp/config.h"
# The library's error record names images; the map never passes one.
printf 'struct mdt_image;\nconst char *mdt__image_name(const struct mdt_image *img);\n%s\n' \
    'const char *mdt__image_name(const struct mdt_image *img) { (void)img; return ""; }' \
    > "$tmp/stub.c"
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
# shellcheck disable=SC2086
if ! $cc -std=gnu11 -O1 -g -fsanitize=thread -pthread -I"$tmp" -I"$top/libmdtools/include" \
    -I"$top/libmdtools" $srcs "$top/libmdtools/util/error.c" \
    "$tmp/stub.c" "$top/tests/idmap/stress.c" -o "$tmp/stress" 2> "$tmp/build.log"; then
    cat "$tmp/build.log"
    echo "0 passed, 1 failed"
    exit 1
fi
start=$(date +%s)
TSAN_OPTIONS="halt_on_error=0 exitcode=66 report_signal_unsafe=0 ${TSAN_OPTIONS:-}" \
    "$tmp/stress" "$cycles" 8 3 > "$tmp/out" 2> "$tmp/err"
rc=$?
end=$(date +%s)
cat "$tmp/out"
reports=$(grep -c '^WARNING: ThreadSanitizer' "$tmp/err")
echo "TSan: exit $rc, $reports reports, $((end - start)) s"
if [ "$reports" -ne 0 ] || [ "$rc" -ne 0 ]; then
    head -n 60 "$tmp/err"
    echo "0 passed, 1 failed"
    exit 1
fi
echo "1 passed, 0 failed"

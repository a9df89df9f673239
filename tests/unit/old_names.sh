#!/bin/sh
# The old names of libmdtools 1:0:0 (tools/api-rename.py's table), three
# ways: a compiler warns where each is used and names its new function
# (MDT_DEPRECATED_FOR); libmdtools.so still exports each; and
# tests/unit/old_names, a program written with them, runs and answers as
# the new names do (it is a test of its own: here only the first two).
# api-rename: off (the old names on purpose)
set -u
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
cc=${CC:-cc}
so=$build/libmdtools/.libs/libmdtools.so
command -v python3 >/dev/null 2>&1 || { echo "old_names.sh: needs python3" >&2; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "old_names.sh: needs nm (binutils)" >&2; exit 77; }
command -v pkg-config >/dev/null 2>&1 || { echo "old_names.sh: needs pkg-config" >&2; exit 77; }
[ -f "$so" ] || { echo "old_names.sh: no $so (a shared build is needed)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$top/tests/common/check.sh"

python3 - "$top/tools/api-rename.py" > "$tmp/table" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location('r', sys.argv[1])
r = importlib.util.module_from_spec(spec)
sys.argv = sys.argv[:1]
spec.loader.exec_module(r)
for old, new in r.RENAMED.items():
    print(old, new)
PY
[ -s "$tmp/table" ] || check_error "no table read from tools/api-rename.py"

# gcc and clang spell the warning "'OLD' is deprecated: use NEW" (C locale).
LC_ALL=C $cc -std=c11 -Wdeprecated-declarations -I"$top/libmdtools/include" -I"$top/tests/common" \
    -I"$build" $(pkg-config --cflags talloc) -c "$top/tests/unit/old_names.c" -o "$tmp/o.o" \
    2> "$tmp/warnings"
rc=$?
[ $rc -eq 0 ] || check_error "old_names.c does not compile: $(cat "$tmp/warnings")"
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' > "$tmp/exports"
while read -r old new; do
    check_that "a use of $old is warned deprecated, naming $new" \
        grep -q "'$old' is deprecated: use $new" "$tmp/warnings"
    check_that "libmdtools.so exports both $old and $new" \
        sh -c 'grep -qx "$1" "$3" && grep -qx "$2" "$3"' - "$old" "$new" "$tmp/exports"
done < "$tmp/table"
# MDT_NO_DEPRECATED takes the old names away (as the next soname will):
# the same program compiles without it, so the failure is the name's.
printf '#include <mdtools/mdtools.h>\nint main(void) { return mdt_strerror(0) != 0; }\n' > "$tmp/n.c"
cflags="-std=c11 -Werror=implicit-function-declaration -Wno-deprecated-declarations -I$top/libmdtools/include"
# shellcheck disable=SC2086
check_that "without MDT_NO_DEPRECATED a program may use mdt_strerror" \
    $cc $cflags -c "$tmp/n.c" -o "$tmp/n.o"
# shellcheck disable=SC2086
if $cc $cflags -DMDT_NO_DEPRECATED -c "$tmp/n.c" -o "$tmp/n.o" 2>/dev/null; then
    check_fail "MDT_NO_DEPRECATED leaves mdt_strerror declared"
else
    check_pass "MDT_NO_DEPRECATED takes mdt_strerror away"
fi
check_done

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

python3 - "$top/tools/api-rename.py" > "$tmp/table" <<'PY'
import importlib.util, sys
spec = importlib.util.spec_from_file_location('r', sys.argv[1])
r = importlib.util.module_from_spec(spec)
sys.argv = sys.argv[:1]
spec.loader.exec_module(r)
for old, new in r.RENAMED.items():
    print(old, new)
PY
[ -s "$tmp/table" ] || { echo "FAIL: no table read from tools/api-rename.py"; exit 1; }

# gcc and clang spell the warning "'OLD' is deprecated: use NEW" (C locale).
LC_ALL=C $cc -std=c11 -Wdeprecated-declarations -I"$top/libmdtools/include" -I"$top/tests/common" \
    -I"$build" $(pkg-config --cflags talloc) -c "$top/tests/unit/old_names.c" -o "$tmp/o.o" \
    2> "$tmp/warnings"
rc=$?
pass=0
fail=0
if [ $rc -ne 0 ]; then
    echo "FAIL: old_names.c does not compile"; cat "$tmp/warnings"; exit 1
fi
nm -D --defined-only "$so" | awk '$2 == "T" { print $3 }' > "$tmp/exports"
while read -r old new; do
    if grep -q "'$old' is deprecated: use $new" "$tmp/warnings"; then
        pass=$((pass + 1))
    else
        echo "FAIL: no warning that $old is deprecated naming $new"; fail=$((fail + 1))
    fi
    if grep -qx "$old" "$tmp/exports" && grep -qx "$new" "$tmp/exports"; then
        pass=$((pass + 1))
    else
        echo "FAIL: libmdtools.so does not export both $old and $new"; fail=$((fail + 1))
    fi
done < "$tmp/table"
# MDT_NO_DEPRECATED takes the old names away (as the next soname will).
printf '#define MDT_NO_DEPRECATED\n#include <mdtools/mdtools.h>\nint main(void) { return mdt_strerror(0) != 0; }\n' > "$tmp/n.c"
if $cc -std=c11 -Werror=implicit-function-declaration -I"$top/libmdtools/include" -c "$tmp/n.c" \
    -o "$tmp/n.o" 2>/dev/null; then
    echo "FAIL: MDT_NO_DEPRECATED leaves mdt_strerror declared"; fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]

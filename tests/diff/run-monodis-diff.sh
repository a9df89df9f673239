#!/bin/sh
# make check entry for the differential test against monodis: runs
# tests/diff/monodis-diff.py on the built mddump. A missing monodis, Mono
# framework or python3 fails the test (CI installs them), it never skips.
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${MDT_BUILDDIR:-$(pwd)}
if ! command -v python3 >/dev/null 2>&1; then
    echo "FAIL: python3 not found (needed by tests/diff/monodis-diff.py)"
    echo "0 passed, 1 failed"
    exit 1
fi
exec python3 "$top/tests/diff/monodis-diff.py" --mddump "$build/tests/diff/mddump" "$@"

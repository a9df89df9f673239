#!/bin/sh
# make check entry for the differential test against monodis: runs
# tests/diff/monodis-diff.py on the built mddump. Without monodis, the Mono
# framework or python3 the test is skipped (exit 77, the reason on stderr;
# tests/summary.sh still counts it as failed, so CI notices).
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${MDT_BUILDDIR:-$(pwd)}
if ! command -v python3 >/dev/null 2>&1; then
    echo "run-monodis-diff.sh: skipped: python3 not found (needed by tests/diff/monodis-diff.py)" >&2
    exit 77
fi
exec python3 "$top/tests/diff/monodis-diff.py" --mddump "$build/tests/diff/mddump" "$@"

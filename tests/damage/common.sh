# Sourced by the tests of tests/damage: where things are, and a skip.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
export MDINSPECT="${MDINSPECT:-$build/mdinspect/mdinspect}"
skip() { echo "$(basename "$0"): skipped: $*"; exit 77; }
command -v python3 >/dev/null 2>&1 || skip "python3 is needed"
[ -x "$MDINSPECT" ] || { echo "$(basename "$0"): $MDINSPECT is not built" >&2; exit 99; }

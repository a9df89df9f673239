#!/bin/sh
# Replay every trace of tests/idmap/traces/ (format: tests/idmap/README.md).
# The replayer prints one line per file and "N passed, M failed" over all
# expectations.
top=${MDT_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
bld=${MDT_BUILDDIR:-.}
exec "$bld/tests/idmap/replay" "$top"/tests/idmap/traces/*.trace

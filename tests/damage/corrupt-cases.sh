#!/bin/sh
# Every mdinspect command that reads a file, and mdinspect batch on PATH
# TOKEN lines of every table, on each malformed input of tests/corrupt
# (damage.py --files): nothing dies of a signal, reports to a sanitizer,
# hangs or exits with a status mdinspect(1) does not document. The library
# side of these cases is tests/corrupt/test_corrupt; this is the shell's.
. "$(dirname "$0")/common.sh"
exec python3 "$top/tests/damage/damage.py" --files "$top"/tests/corrupt/cases/*.bin

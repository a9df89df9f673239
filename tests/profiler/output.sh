#!/bin/sh
# The log path is checked before the program starts: a device, a
# directory, a missing folder, a file as a folder, %p in a folder: status 2
# at once, the reason said, the program never run; a write error later (the
# file size limit) is said once with its errno, the program runs to its
# end, and the log holds whole lines; a first process that is not a .NET
# one leaves no empty log behind, its .NET child's log beside it, and the
# program's status is kept (lifecycle.py output).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
python3 "$top/tests/profiler/lifecycle.py" output

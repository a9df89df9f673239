#!/bin/sh
# A tree of three .NET processes (the test program starting a child dotnet,
# which starts another) under mdprofile, with -o NAME.log (the first
# process writes it, the others NAME.PID.log beside it) and with
# -o NAME.%p.log: one complete log per process, named exactly, each frame
# named as the process named itself (offline too, for the first run), the
# header's pid, ppid and cmd right, mdprofile listing every log, and
# nothing of the profiler on the programs' output (lifecycle.py children).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
python3 "$top/tests/profiler/lifecycle.py" children

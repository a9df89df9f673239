#!/bin/sh
# Attach as often as the user wants: three sessions in a row on one
# process (--samples; each mdprofile --attach returns once its log is
# complete, each log named as at startup), two at once (the runtime's
# refusal, explained), a second copy of the library, an open-ended session
# ended by SIGINT to mdprofile; the program runs on and ends normally, with
# nothing of the profiler on its output (lifecycle.py attach).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
python3 "$top/tests/profiler/lifecycle.py" attach

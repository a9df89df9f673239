#!/bin/sh
# SIGTERM and SIGINT mid-run, to the program and to mdprofile, and Ctrl-C
# on a terminal (which reaches mdprofile and the program at once: not sent
# twice): the log ends with #stats end=signal:NAME (end=exit when the
# program handled the signal and exited), every frame named as the program
# named itself, offline too, mdprofile's status 128 + the signal; SIGKILL
# leaves the records written so far and no #stats (lifecycle.py signals).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
python3 "$top/tests/profiler/lifecycle.py" signals

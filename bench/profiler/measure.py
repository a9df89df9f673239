#!/usr/bin/env python3
"""measure.py COMMAND...: run it, print "cpu_ms wall_ms" on stderr: the CPU
time (user + system) of the command and every process it started and
waited for, and the wall time."""
import os
import resource
import subprocess
import sys
import time

before = resource.getrusage(resource.RUSAGE_CHILDREN)
t0 = time.monotonic()
rc = subprocess.call(sys.argv[1:])
t1 = time.monotonic()
after = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
sys.stderr.write("measure %d %d\n" % (cpu * 1000, (t1 - t0) * 1000))
sys.exit(rc)

#!/bin/sh
# Sample mode with a drain thread that never gets to drain (its period made
# a minute long, as if a busy machine never scheduled it): each thread's
# buffer fills after a few hundred samples, and what the drain thread does
# on its ticks (recording ReadyToRun code, lazy catch-up) waits for the end.
# Every frame is still named and every caller of Work, Deep and Leaf still
# the right one, as in names.sh, and the log resolves offline like
# names.sh's. The buffers may fill (how many signals a busy machine delivers
# varies): a sample without room for the deepest walk is dropped and
# counted, never cut short (test_core checks that one exactly).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
# With the CPU-time timer: a full buffer (128 KiB a thread) then holds
# ~4x the CPU time it holds with the perf clock, whose every signal is one
# period (profiler/core/perfclock.c); with perf the buffers filled during
# the startup and the program's cases went unsampled. What this test
# checks (names, callers) is the same with either clock.
MDPROFILE_DRAIN_MS=60000 names_run starved starved 3000 --clock timer

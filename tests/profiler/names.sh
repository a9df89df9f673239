#!/bin/sh
# Sample mode from startup on the names workload (data/profiler/Workload):
# every frame of the program resolves, in-process and offline through
# mdinspect batch (offline.py), to the name the program prints about itself
# through reflection (generic methods of generic classes and structs over
# value and reference types with shared __Canon code, nested generics,
# Nullable arguments, framework code over the program's types, two threads,
# tier-1 and OSR code); format and statistics are consistent. The log and the
# expected names stay in the build tree (tests/profiler/names.*), with
# batch's outputs.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
names_run names names 2500

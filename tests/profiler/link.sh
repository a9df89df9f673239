#!/bin/sh
# Link correctness: the profiler library (and the probe build, and
# libmdtools.so) load with dlopen(RTLD_NOW), every symbol bound at once, as
# a host process may load them (dlnow.c); libmdprofile.so exports
# DllGetClassObject. Every shared object is linked with -z defs
# (configure.ac), so a missing dependency fails the build already; this
# checks the objects as built. Then a profiled run with LD_BIND_NOW=1: the
# runtime loads the profiler and the log is complete (libmdprofile.so used
# zlib without linking it: the runtime refused it, and the program ran
# unprofiled). The second half needs dotnet (exit 77 without it, after the
# first half passed).
set -eu
build=${MDT_BUILDDIR:?run from make check}
so=$build/profiler/.libs/libmdprofile.so
"$build/tests/profiler/dlnow" "$so=DllGetClassObject" \
    "$build/tests/profiler/.libs/libmdprofile_probe.so=DllGetClassObject" \
    "$build/libmdtools/.libs/libmdtools.so=mdt_image_open_buffer" ||
    { echo "FAIL: a shared object does not load with RTLD_NOW" >&2; exit 1; }
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/bindnow.log
LD_BIND_NOW=1 profile "$log" --debug-names -- dotnet "$workload" names "$work/bindnow.expected" 300 \
    >"$work/bindnow.out" 2>"$work/bindnow.err" || {
    cat "$work/bindnow.out" "$work/bindnow.err" >&2
    fail "the run with LD_BIND_NOW=1 failed"
}
check named "$log" "$work/bindnow.expected" >"$work/bindnow.check" || {
    cat "$work/bindnow.check" >&2
    fail "the log of the run with LD_BIND_NOW=1 is not complete and right"
}
tail -n 1 "$work/bindnow.check"

#!/bin/sh
# The profiler's cost per sample inside real runs (bench/profiler/README.md,
# "The handler's cost"): the Workload's native modes (gc, jit, memmove,
# exceptions) and the run.sh workload (bench), each profiled RUNS times at
# 1 kHz by a profiler built with -DMDP_BENCH_CLOCK, whose #stats line then
# also carries the TSC ticks spent walking stacks in the signal handler,
# the frames walked, the drain thread's CPU time and the process's: each
# workload at two lengths (1 and 4 s of CPU time; bench 1000 and 4000
# rounds) and two rates. cost.py turns them into a cost per signal and an
# overhead at 1 kHz.
#
#   bench/profiler/cost.sh BUILDDIR CLOCKBUILD [RUNS [DELIVERY_NS]]
#
# BUILDDIR: the ordinary build tree (the C# programs are built there, as
# for the tests). CLOCKBUILD: a build tree configured with
# CPPFLAGS=-DMDP_BENCH_CLOCK (only profiler/libmdprofile.la and
# profiler/mdprofile are needed; the bench flag never goes into a shipped
# build). DELIVERY_NS: what the kernel
# spends per signal, MIN,MEDIAN,MAX, from `bench/profiler/handler signal`
# (handler.sh); cost.py adds it to the handler's own time.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
usage='usage: cost.sh BUILDDIR CLOCKBUILD [RUNS [DELIVERY_NS]]'
build=$(cd "${1:?$usage}" && pwd)
clock=$(cd "${2:?$usage}" && pwd)
runs=${3:-3}
delivery=${4:-0,0,0}
grep -q 'MDP_BENCH_CLOCK' "$clock/config.log" 2>/dev/null ||
    { echo "cost.sh: $clock was not configured with CPPFLAGS=-DMDP_BENCH_CLOCK" >&2; exit 1; }
MDT_TOP_SRCDIR=$top MDT_BUILDDIR=$build
export MDT_TOP_SRCDIR MDT_BUILDDIR
. "$top/tests/profiler/common.sh"
build_programs
# the bench build's launcher and profiler
mdprofile=$clock/profiler/mdprofile
MDPROFILE_PROFILER=$clock/profiler/.libs/libmdprofile.so
out=$clock/bench/profiler/cost
mkdir -p "$out"
rm -f "$out"/*.log
# Three runs of each workload a round: short (1 s of CPU at 1 kHz), long
# (4 s at 1 kHz) and slow (4 s at 100 Hz: fewer signals, as many drain
# passes): the drain thread's CPU time is then split exactly into a cost
# per signal, a cost per drain pass (every 20 ms of wall time) and a fixed
# cost (names resolved once, the ELF table, the header); the handler's is
# counted per call anyway.
r=1
while [ $r -le "$runs" ]; do
    for w in gc jit memmove exceptions bench; do
        for len in short long slow; do
            ms=4000 n=4000 rate=1000
            [ $len != short ] || ms=1000 n=1000
            [ $len != slow ] || rate=100
            case $w in
            exceptions) set -- --exceptions -- dotnet "$workload" exceptions "$out/x.out" $ms ;;
            bench) set -- -- dotnet "$workload" bench $n ;;
            *) set -- -- dotnet "$workload" "$w" "$out/x.out" $ms ;;
            esac
            "$mdprofile" --rate $rate -o "$out/$w.$len.$r.log" "$@" >"$out/$w.out" 2>&1 ||
                { cat "$out/$w.out" >&2; exit 1; }
        done
    done
    r=$((r + 1))
done
python3 "$top/bench/profiler/cost.py" --delivery "$delivery" "$out"/*.log

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
#   (DELIVERY_NS: the timer's; COST_DELIVERY_PERF, MIN,MEDIAN,MAX: the
#   perf clock's, from `bench/profiler/handler perfsignal 1000 N`)
#
# COST_WORKLOADS="web bench" (say) runs only those, without the idle
# server's run (default: idle gc jit memmove exceptions bench web).
# COST_CLOCKS="perf timer" (say) runs every workload with each of sample
# mode's CPU clocks (mdprofile --clock) in turn, round by round, each
# clock's logs in a folder of its own (default: auto, the launcher's).
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
clocks=${COST_CLOCKS:-auto}
base=$clock/bench/profiler/cost
for k in $clocks; do
    mkdir -p "$base/$k"
    rm -f "$base/$k"/*.log
done
# Three runs of each workload a round: short (1 s of CPU at 1 kHz), long
# (4 s at 1 kHz) and slow (4 s at 100 Hz: fewer signals, as many drain
# passes): the drain thread's CPU time is then split exactly into a cost
# per signal, a cost per drain pass (every 20 ms of wall time) and a fixed
# cost (names resolved once, the ELF table, the header); the handler's is
# counted per call anyway.
# the ASP.NET Core minimal API under loopback load (bench/profiler/webload.py),
# when dotnet has the framework
web=
if dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft.AspNetCore.App '; then
    build_web
    web=web
else
    echo "cost.sh: no Microsoft.AspNetCore.App runtime: no web workload" >&2
fi
# The server, profiled from its start at RATE, serving REQUESTS requests
# and then waiting IDLE seconds before /quit: LOG
web_run() { # LOG RATE REQUESTS IDLE
    rm -f "$out/web.out"
    "$mdprofile" --clock "$k" --rate "$2" -o "$1" -- dotnet "$work/bin/Web/Web.dll" "$out/web.facts" \
        >"$out/web.out" 2>&1 &
    server=$!
    timeout 300 python3 "$top/bench/profiler/webload.py" "$out/web.out" "$3" "$4" ||
        { kill "$server" 2>/dev/null; wait "$server"; cat "$out/web.out" >&2; exit 1; }
    wait "$server" || { cat "$out/web.out" >&2; exit 1; }
}
r=1
while [ $r -le "$runs" ]; do
  for k in $clocks; do
    out=$base/$k
    # a process that waits: the server started, then 20 s without a
    # request (the drain thread's passes alone: cost.py --each)
    case " ${COST_WORKLOADS:-idle} " in
    *" idle "*) [ -z "$web" ] || web_run "$out/idle.$r.log" 1000 0 20 ;;
    esac
    for w in ${COST_WORKLOADS:-gc jit memmove exceptions bench web}; do
        [ "$w" != idle ] || continue
        [ "$w" != web ] || [ -n "$web" ] || continue
        for len in short long slow; do
            ms=4000 n=4000 rate=1000
            [ $len != short ] || ms=1000 n=1000
            [ $len != slow ] || rate=100
            case $w in
            web)
                # 1 and 4 units of 600 requests (~0.8 and ~1.8 s of CPU
                # here, most of the short run the server's start)
                web_run "$out/$w.$len.$r.log" $rate $((ms * 600 / 1000)) 0
                continue ;;
            exceptions) set -- --exceptions -- dotnet "$workload" exceptions "$out/x.out" $ms ;;
            bench) set -- -- dotnet "$workload" bench $n ;;
            *) set -- -- dotnet "$workload" "$w" "$out/x.out" $ms ;;
            esac
            "$mdprofile" --clock "$k" --rate $rate -o "$out/$w.$len.$r.log" "$@" >"$out/$w.out" 2>&1 ||
                { cat "$out/$w.out" >&2; exit 1; }
        done
    done
  done
  r=$((r + 1))
done
for k in $clocks; do
    out=$base/$k
    echo "clock $k:"
    # the perf clock's signals cost the kernel more (an interrupt each):
    # COST_DELIVERY_PERF, from `bench/profiler/handler perfsignal`
    # (its own variable: the clocks after it keep the timer's)
    d=$delivery
    [ "$k" != perf ] || d=${COST_DELIVERY_PERF:-$delivery}
    python3 "$top/bench/profiler/cost.py" --delivery "$d" $(ls "$out"/*.log | grep -v '/idle\.')
    if [ -n "$web" ] && ls "$out"/idle.*.log >/dev/null 2>&1; then
        echo
        echo "the server waiting 20 s after its start, no request (as run):"
        python3 "$top/bench/profiler/cost.py" --each --delivery "$d" "$out"/idle.*.log
    fi
    echo
done

#!/bin/sh
# The profiler's cost on a `dotnet build` (bench/profiler/README.md): many
# short, mostly waiting processes (MSBuild, the compiler), where the drain
# thread's fixed and per-pass costs weigh. RUNS builds of a copy of
# data/profiler/Workload (obj/ and bin/ removed each time) with
# -nodeReuse:false -p:UseSharedCompilation=false, profiled from the start
# at 1 kHz by each CLOCKBUILD in turn (trees configured with
# CPPFLAGS=-DMDP_BENCH_CLOCK, as for cost.sh: several to compare two
# profilers in one run, taking turns); every process's log (app.log, then
# app.PID.log beside it) is read by `cost.py --each`: one line per process,
# as run.
#
#   bench/profiler/build.sh RUNS CLOCKBUILD...
#
# BUILD_CLOCKS="perf timer" (say): each profiler with each of sample
# mode's CPU clocks (mdprofile --clock) in turn (default: auto).
# Logs go to the first CLOCKBUILD's bench/profiler/build/: pI.CLOCK.rR.log.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
usage='usage: build.sh RUNS CLOCKBUILD...'
runs=${1:?$usage}
shift
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
for c in "$@"; do
    grep -q 'MDP_BENCH_CLOCK' "$c/config.log" 2>/dev/null ||
        { echo "build.sh: $c was not configured with CPPFLAGS=-DMDP_BENCH_CLOCK" >&2; exit 1; }
done
command -v dotnet >/dev/null || { echo "build.sh: no dotnet" >&2; exit 1; }
out=$(cd "$1" && pwd)/bench/profiler/build
mkdir -p "$out"
rm -rf "$out"/*.log "$out/src"
clocks=${BUILD_CLOCKS:-auto}
r=1
while [ "$r" -le "$runs" ]; do
    i=0
    for c in "$@"; do
      i=$((i + 1))
      c=$(cd "$c" && pwd)
      for k in $clocks; do
        rm -rf "$out/src"
        cp -R "$top/data/profiler/Workload" "$out/src"
        chmod -R u+w "$out/src"
        rm -rf "$out/src/obj" "$out/src/bin"
        (cd "$out/src" && MDPROFILE_PROFILER=$c/profiler/.libs/libmdprofile.so \
            "$c/profiler/mdprofile" --clock "$k" --rate 1000 -o "$out/p$i.$k.r$r.log" -- \
            dotnet build -c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false \
            >"$out/p$i.$k.r$r.out" 2>&1) || { cat "$out/p$i.$k.r$r.out" >&2; exit 1; }
      done
    done
    r=$((r + 1))
done
i=0
for c in "$@"; do
    i=$((i + 1))
    for k in $clocks; do
        echo "profiler $i, clock $k: $c"
        python3 "$top/bench/profiler/cost.py" --each "$out"/p$i.$k.r*.log
    done
done

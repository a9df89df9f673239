#!/bin/sh
# mdprofile against the runtime's own sampler on a `dotnet build`, in one
# run.
#
#   bench/profiler/buildpeer.sh [BUILDDIR [ROUNDS]]     (defaults: build, 5)
#
# Each round builds a fresh copy of data/profiler/Workload (obj/ and bin/
# removed; -nodeReuse:false -p:UseSharedCompilation=false: MSBuild and the
# compiler are processes of the build that end with it), in rotating order:
#   base        the build alone
#   mdprofile   mdprofile, sample mode at 1 kHz of thread CPU time; every
#               .NET process of the build (MSBuild, the compiler) is
#               profiled, each writing its log
#   eventpipe   the EventPipe sample profiler and the runtime provider, as
#               run.sh's dotnet-trace asks for them, through the runtime's
#               environment (DOTNET_EnableEventPipe, a trace.{pid}.nettrace
#               per process): what dotnet-trace collects, in every process.
#               `dotnet-trace collect -- dotnet build` itself cannot profile
#               a build: the compiler process inherits its suspending
#               diagnostic port (DOTNET_DiagnosticPorts=...,suspend) and
#               waits for a tool that never connects (the build hangs)
# and prints, per configuration, the median CPU time of the build's whole
# process tree (user + system of every process waited for, measure.py)
# with its range, and the same as a ratio to base; the same for wall time.
# A build's CPU time varies by a few percent between runs: read the
# ranges, and more rounds when the effect is that small.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:-$top/build}" && pwd)
rounds=${2:-5}
. "$top/bench/profiler/lib.sh"
out=$build/bench/profiler/buildpeer
mkdir -p "$out"
providers='Microsoft-DotNETCore-SampleProfiler:0:5,Microsoft-Windows-DotNETRuntime:0x14C14FCCBD:4'

run_one() { # config round
    cfg=$1
    r=$2
    rm -rf "$out/src" "$out"/p.*log "$out"/trace.*.nettrace
    cp -R "$top/data/profiler/Workload" "$out/src"
    chmod -R u+w "$out/src"
    rm -rf "$out/src/obj" "$out/src/bin"
    set -- dotnet build -c Release -nologo -v q -nodeReuse:false -p:UseSharedCompilation=false
    m="python3 $top/bench/profiler/measure.py"
    case $cfg in
    base) (cd "$out/src" && $m "$@") ;;
    mdprofile) (cd "$out/src" && $m "$mdprofile" --rate 1000 -o "$out/p.log" -- "$@") ;;
    eventpipe) (cd "$out/src" && DOTNET_EnableEventPipe=1 DOTNET_EventPipeConfig="$providers" \
        DOTNET_EventPipeOutputPath="$out/trace.{pid}.nettrace" $m "$@") ;;
    esac >"$out/$cfg.out" 2>&1 || { cat "$out/$cfg.out" >&2; exit 1; }
    cost=$(sed -n 's/^measure \([0-9]*\) \([0-9]*\)$/\1 \2/p' "$out/$cfg.out" | tail -n 1)
    [ -n "$cost" ] || { cat "$out/$cfg.out" >&2; exit 1; }
    echo "$cfg $r $cost" >>"$out/results.txt"
}

: >"$out/results.txt"
rotate "$rounds" run_one base mdprofile eventpipe
python3 - "$out/results.txt" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
by = {}
for cfg, _, cpu, wall in rows:
    by.setdefault(cfg, []).append((int(cpu), int(wall)))
base = by["base"]
bc = statistics.median(c for c, _ in base)
bw = statistics.median(w for _, w in base)
print("| config | CPU ms, median (range) | CPU, x base | wall ms, median (range) | wall, x base |")
print("| --- | --- | --- | --- | --- |")
for cfg in ("base", "mdprofile", "eventpipe"):
    v = by.get(cfg, [])
    if not v:
        continue
    cs = [c for c, _ in v]
    ws = [w for _, w in v]
    print("| %s | %d (%d-%d) | %.3fx | %d (%d-%d) | %.3fx |"
          % (cfg, statistics.median(cs), min(cs), max(cs), statistics.median(cs) / bc,
             statistics.median(ws), min(ws), max(ws), statistics.median(ws) / bw))
PY

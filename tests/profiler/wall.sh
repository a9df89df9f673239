#!/bin/sh
# Wall-clock mode (issue 27): `Workload wall` (data/profiler/Workload/
# Wall.cs) puts four named threads for the same wall time in Monitor.Wait,
# Thread.Sleep, a pipe's read(2) and a spin; under `mdprofile --mode wall`
# wall.py checks each thread's state (its records' leaf) and its share of
# wall time by the TID the program read itself, batch's state frames in
# --top and --pprof, and batch on the log cut anywhere. Then `Workload
# idle` with 1,000 threads in Monitor.Wait for 2 s: all in it before the
# release and none woken early by a signal, each sampled and blocked, each
# one's share, the signals within the budget, and the run's CPU time
# bounded: at most 2.5 s of CPU for the 2 s of 1,000 idle threads (the
# program's own startup included; measured 0.5-0.8 s, bench/README.md).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/wall.log
profile "$log" --mode wall --debug-names -- dotnet "$workload" wall "$work/wall.expected" 2000 \
    >"$work/wall.out" 2>&1 || { cat "$work/wall.out" >&2; fail "the profiled wall run failed"; }
python3 "$top/tests/profiler/wall.py" wall "$log" "$work/wall.expected" --assemblies "$work/bin/Workload"

log=$work/wall-idle.log
cpu=$(python3 - "$mdprofile" "$log" "$workload" "$work/wall-idle.expected" "${MDP_PRELOAD:-}" <<'PY'
import os, resource, subprocess, sys
mdprofile, log, workload, expected, preload = sys.argv[1:]
env = dict(os.environ)
if preload:
    env["LD_PRELOAD"] = preload + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
r = subprocess.run(["timeout", "300", mdprofile, "-o", log, "--mode", "wall", "--", "dotnet", workload,
                    "idle", expected, "2000", "1000"], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
u = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%d %.2f" % (r.returncode, u.ru_utime + u.ru_stime))
PY
)
set -- $cpu
[ "$1" = 0 ] || fail "the profiled idle run failed ($1)"
python3 "$top/tests/profiler/wall.py" idle "$log" "$work/wall-idle.expected" 2000 1000
if [ "${MDT_SANITIZED:-0}" = 1 ]; then
    echo "ok   the idle run took $2 s of CPU (sanitized build: not bounded)"
elif python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 2.5 else 1)" "$2"; then
    echo "ok   the idle run took $2 s of CPU (2.5 s at most)"
else
    fail "the idle run took $2 s of CPU (2.5 s at most)"
fi

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

# Wall mode after an attach: `Workload wait` runs unprofiled, mdprofile
# attaches in wall mode for 2 s and detaches; the log is whole, its header
# says attach=1 clock=wall, every record's leaf is a state, and the
# program goes on and ends normally when told to.
log=$work/wall-attach.log
exp=$work/wall-attach.expected
out=$work/wall-attach.out
stop=$work/wall-attach.stop
rm -f "$log" "$exp" "$out" "$stop"
env ${MDP_PRELOAD:+LD_PRELOAD=$MDP_PRELOAD} dotnet "$workload" wait "$exp" "$stop" >"$out" 2>&1 &
app=$!
trap 'touch "$stop"; kill $app 2>/dev/null || true' EXIT
i=0
while ! grep -q '^ready' "$out" 2>/dev/null; do
    kill -0 $app 2>/dev/null || fail "the program did not get ready: $(cat "$out")"
    i=$((i + 1))
    [ $i -le 1500 ] || fail "the program did not get ready: $(cat "$out")"
    sleep 0.2
done
"$mdprofile" --attach "$app" --mode wall --duration 2 -o "$log" || fail "the wall-mode attach failed"
kill -0 $app 2>/dev/null || fail "the program ended before it was told to: $(cat "$out")"
touch "$stop"
wait $app || fail "the program failed after the profiler detached: $(cat "$out")"
trap - EXIT
head -n 1 "$log" | grep -q ' mode=wall .* attach=1 clock=wall budget=' || fail "wall attach header: $(head -n 1 "$log")"
tail -n 1 "$log" | grep -q '^#stats .* end=detach' || fail "the wall attach log is not whole"
n=$(grep -c '^stack ' "$log" || true)
bad=$(awk '$1 == "stack" && $5 !~ /^state:/' "$log" | wc -l)
[ "$n" -gt 0 ] && [ "$bad" -eq 0 ] || fail "wall attach: $n records, $bad without a state leaf"
echo "ok   wall mode after an attach: $n records, each with its state, the program went on"

#!/bin/sh
# Attach: the names workload starts without the profiler; mdprofile
# --attach loads it over the diagnostics IPC for two seconds (sample mode).
# The catch-up (modules, JIT-compiled functions, threads; classes and
# ReadyToRun code lazily) must name every frame as a startup profile does,
# the header says attach=1, the profiler detaches after its duration and
# the program runs on to a normal end. Modes other than sample are refused
# before anything is sent.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/attach.log
exp=$work/attach.expected
out=$work/attach.out
rm -f "$log" "$exp" "$out"
# (in a sanitized build the profiler that will be attached needs libasan
# loaded first: the program starts with it preloaded)
env ${MDP_PRELOAD:+LD_PRELOAD=$MDP_PRELOAD} dotnet "$workload" wait "$exp" 8000 >"$out" 2>&1 &
app=$!
trap 'kill $app 2>/dev/null || true' EXIT
for i in $(seq 150); do grep -q '^ready' "$out" 2>/dev/null && break; sleep 0.2; done
grep -q '^ready' "$out" || fail "the program did not start: $(cat "$out")"
# let it JIT, tier up and load what it will before attaching
sleep 1
if "$mdprofile" --attach "$app" --mode calls -o "$log" 2>"$work/attach.refused"; then
    fail "calls mode on attach was not refused"
fi
grep -q 'sample mode only' "$work/attach.refused" || fail "unclear refusal: $(cat "$work/attach.refused")"
"$mdprofile" --attach "$app" --duration 2 --debug-names -o "$log" || fail "attach failed"
for i in $(seq 150); do grep -q '^#stats' "$log" 2>/dev/null && break; sleep 0.2; done
wait $app || fail "the program failed after the profiler detached: $(cat "$out")"
trap - EXIT
check attach "$log" "$exp"

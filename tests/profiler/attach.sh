#!/bin/sh
# Attach: the names workload starts without the profiler; mdprofile
# --attach loads it over the diagnostics IPC for two seconds (sample mode).
# The catch-up (modules, JIT-compiled functions, threads; classes and
# ReadyToRun code lazily) must name every frame as a startup profile does,
# the header says attach=1, the profiler detaches after its duration and
# the program runs on to a normal end; the log resolves offline like a
# startup profile's. Modes other than sample are refused with a clear
# message before anything is sent.
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
# calls and alloc modes cannot attach: the runtime accepts enter hooks and
# allocation callbacks only from a profiler loaded at startup
for mode in calls alloc; do
    if "$mdprofile" --attach "$app" --mode $mode -o "$log" 2>"$work/attach.refused"; then
        fail "$mode mode on attach was not refused"
    fi
    grep -q 'profiles in sample mode only: the runtime allows enter hooks and allocation callbacks only to a profiler loaded at startup' \
        "$work/attach.refused" || fail "unclear refusal of $mode mode: $(cat "$work/attach.refused")"
    [ ! -e "$log" ] || fail "a refused attach ($mode mode) wrote a log"
done
"$mdprofile" --attach "$app" --duration 2 --debug-names -o "$log" || fail "attach failed"
for i in $(seq 150); do grep -q '^#stats' "$log" 2>/dev/null && break; sleep 0.2; done
wait $app || fail "the program failed after the profiler detached: $(cat "$out")"
trap - EXIT
check_offline attach "$log" "$exp"

#!/bin/sh
# Attach: the names workload starts without the profiler; mdprofile
# --attach loads it over the diagnostics IPC (sample mode) until it has
# counted 4000 samples, four seconds of the program's CPU time: a window
# in wall seconds would hold few samples, or none of some method, on a
# busy machine. The catch-up (modules, JIT-compiled functions, threads;
# classes and ReadyToRun code lazily) must name every frame as a startup
# profile does, the header says attach=1, the profiler detaches at the end
# of its session and the program runs on to a normal end (it stops when
# told to, after the log is written); the log resolves offline like a
# startup profile's. Modes other than sample are refused with a clear
# message before anything is sent.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/attach.log
exp=$work/attach.expected
out=$work/attach.out
stop=$work/attach.stop
rm -f "$log" "$exp" "$out" "$stop"
# (in a sanitized build the profiler that will be attached needs libasan
# loaded first: the program starts with it preloaded)
env ${MDP_PRELOAD:+LD_PRELOAD=$MDP_PRELOAD} dotnet "$workload" wait "$exp" "$stop" >"$out" 2>&1 &
app=$!
trap 'touch "$stop"; kill $app 2>/dev/null || true' EXIT
# The program says "ready" once it has run a second of CPU time (JIT
# compiled and mostly tiered up). The waits below bound a hang, nothing
# else: 300 s, as `timeout` does for the startup tests.
wait_for() { # PATTERN FILE
    i=0
    while ! grep -q "$1" "$2" 2>/dev/null; do
        kill -0 $app 2>/dev/null || return 1
        i=$((i + 1))
        [ $i -le 1500 ] || return 1
        sleep 0.2
    done
}
wait_for '^ready' "$out" || fail "the program did not get ready: $(cat "$out")"
# calls and alloc modes cannot attach: the runtime accepts enter hooks and
# allocation callbacks only from a profiler loaded at startup
for mode in calls alloc; do
    if "$mdprofile" --attach "$app" --mode $mode -o "$log" 2>"$work/attach.refused"; then
        fail "$mode mode on attach was not refused"
    fi
    grep -q "cannot profile $mode: the runtime grants those callbacks only to a profiler loaded at startup" \
        "$work/attach.refused" || fail "unclear refusal of $mode mode: $(cat "$work/attach.refused")"
    [ ! -e "$log" ] || fail "a refused attach ($mode mode) wrote a log"
done
"$mdprofile" --attach "$app" --samples 4000 --debug-names -o "$log" || fail "attach failed"
wait_for '^#stats' "$log" || fail "no complete log from the attached profiler: $(cat "$out")"
# the profiler has detached: the program still runs, and ends when told
kill -0 $app 2>/dev/null || fail "the program ended before it was told to: $(cat "$out")"
touch "$stop"
wait $app || fail "the program failed after the profiler detached: $(cat "$out")"
trap - EXIT
samples=$(sed -n 's/^#stats samples=\([0-9]*\) .*/\1/p' "$log")
[ "${samples:-0}" -ge 4000 ] || fail "the session ended after ${samples:-no} samples, before 4000"
check_offline attach "$log" "$exp"

#!/bin/sh
# Sample mode's CPU clock (issue 24; profiler/core/perfclock.c): with the
# perf_events clock, a CPU-bound run is signalled near the rate asked per
# CPU second (the CPU-time timer gives ~HZ: 250 on a HZ=250 kernel), each
# sample weighing about one period; with either clock the weighted samples
# per CPU second are the rate; the names stay exact with each clock; where
# perf_event_open is refused (forced here with MDPROFILE_TEST_PERF=refuse,
# as a container's seccomp or perf_event_paranoid 3 would) auto falls back
# to the timer and says so once, in the log and through mdprofile, and
# --clock perf refuses to start; beyond the cap on fds (RLIMIT_NOFILE 266:
# 5 fds) further threads get the timer, said once and counted. Fds closed
# at detach: lifecycle.py attach. Exits 77 where perf_event_open is not
# allowed at all on this machine, saying why.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
. "$top/tests/common/check.sh"
rate=1000

# run NAME [ENV=VALUE...] -- MDPROFILE-OPTION...: the bench workload (one to
# two CPU seconds) profiled into $work/NAME.log, mdprofile's error in
# $work/NAME.err; prints the CPU seconds of everything it ran (mdprofile
# itself takes next to none)
run() {
    name=$1
    shift
    python3 - "$work/$name" "$mdprofile" "$workload" "$@" <<'EOF'
import os, resource, subprocess, sys
base, mdprofile, workload = sys.argv[1:4]
args = sys.argv[4:]
env = dict(os.environ)
while args and args[0] != "--":
    k, v = args.pop(0).split("=", 1)
    env[k] = v
args = args[1:]
pre = env.get("MDP_PRELOAD")
if pre:
    env["LD_PRELOAD"] = pre + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
try:
    os.unlink(base + ".log")
except FileNotFoundError:
    pass
r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
with open(base + ".out", "w") as out, open(base + ".err", "w") as err:
    rc = subprocess.call([mdprofile, "-o", base + ".log"] + args + ["--", "dotnet", workload, "bench", "2400"],
                         stdout=out, stderr=err, env=env, timeout=300)
r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
print("%.3f" % (r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime))
sys.exit(rc)
EOF
}
# key LOG LINE-PREFIX KEY: KEY=VALUE's value on the log's first line that starts with the prefix
key() {
    sed -n "/^$2/{s/.* $3=\([^ ]*\).*/\1/p;q}" "$1"
}
# ratio A B: A / B to 3 places
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
# within X LO HI: LO <= X <= HI
within() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

cpu=$(run perf -- --clock auto) || { cat "$work/perf.err" >&2; fail "the profiled run failed"; }
clock=$(key "$work/perf.log" "#mdprofile" cpu_clock)
case $clock in
perf | perf_user) ;;
timer)
    check_skip "perf_event_open is not allowed here: $(sed -n 's/^# sampling with CPU-time timers: \([^;]*\);.*/\1/p' "$work/perf.log")" ;;
*) fail "no cpu_clock= in the header: $(head -n 1 "$work/perf.log")" ;;
esac
signals=$(key "$work/perf.log" "#stats" signals)
samples=$(key "$work/perf.log" "#stats" samples)
per_s=$(ratio "$signals" "$cpu")
per_sample=$(ratio "$signals" "$samples")
echo "perf clock ($clock): $signals signals, $samples samples (periods) in $cpu CPU s: $per_s signals per CPU s"
if [ "${MDT_SANITIZED:-0}" = 1 ]; then
    # the drain thread (not sampled) is several times heavier under ASan:
    # the process's CPU time says less of the sampled threads'
    check_that "perf clock: $per_s signals per CPU second (sanitized: 500 to 1150)" within "$per_s" 500 1150
else
    check_that "perf clock: $per_s signals per CPU second (1000 +-15%)" within "$per_s" 850 1150
fi
check_that "perf clock: a signal per period ($per_sample signals per sample period, at least 0.9)" \
    within "$per_sample" 0.9 1.0
check_that "perf clock: every thread on it (clock.perf=$(key "$work/perf.log" "#stats" clock.perf), clock.timer=$(key "$work/perf.log" "#stats" clock.timer))" \
    [ "$(key "$work/perf.log" "#stats" clock.timer)" = 0 ]

tcpu=$(run timer -- --clock timer) || { cat "$work/timer.err" >&2; fail "the profiled run (timer) failed"; }
tsignals=$(key "$work/timer.log" "#stats" signals)
tsamples=$(key "$work/timer.log" "#stats" samples)
echo "timer clock: $tsignals signals, $tsamples samples (periods) in $tcpu CPU s: $(ratio "$tsignals" "$tcpu") signals per CPU s"
check_that "timer clock: the header says cpu_clock=timer" \
    [ "$(key "$work/timer.log" "#mdprofile" cpu_clock)" = timer ]
if [ "${MDT_SANITIZED:-0}" != 1 ]; then
    for c in perf timer; do
        s=$(key "$work/$c.log" "#stats" samples)
        w=$(ratio "$s" "$(eval echo "\$$([ $c = perf ] && echo cpu || echo tcpu)")")
        check_that "$c clock: $w sample periods per CPU second (the rate, +-15%)" within "$w" 850 1150
    done
fi

# refused: auto falls back, once said; perf refuses to start
cpu=$(run refused MDPROFILE_TEST_PERF=refuse -- --clock auto) ||
    { cat "$work/refused.err" >&2; fail "the profiled run (refused) failed"; }
check_that "refused: auto samples with the timer (cpu_clock=$(key "$work/refused.log" "#mdprofile" cpu_clock))" \
    [ "$(key "$work/refused.log" "#mdprofile" cpu_clock)" = timer ]
n=$(grep -c '^# sampling with CPU-time timers: perf_event_open refused' "$work/refused.log" || true)
check_that "refused: the log says why, once ($n)" [ "$n" -eq 1 ]
n=$(grep -c 'sampling with CPU-time timers: perf_event_open refused' "$work/refused.err" || true)
check_that "refused: mdprofile says why, once ($n)" [ "$n" -eq 1 ]
good=0
[ "$(key "$work/refused.log" "#stats" clock.perf)" = 0 ] &&
    [ "$(key "$work/refused.log" "#stats" samples)" -gt 100 ] && good=1
check_that "refused: the log is whole, its samples from the timer ($(key "$work/refused.log" "#stats" samples) samples, clock.timer=$(key "$work/refused.log" "#stats" clock.timer))" \
    [ "$good" = 1 ]
st=0
run refused-perf MDPROFILE_TEST_PERF=refuse -- --clock perf >/dev/null || st=$?
check_that "refused, --clock perf: the program ran ($st), the profiler did not start, and said why: $(head -n 1 "$work/refused-perf.err")" \
    grep -q 'cannot start: --clock perf: perf_event_open refused' "$work/refused-perf.err"

# the cap on fds: RLIMIT_NOFILE 266 leaves 5 perf fds
st=0
(ulimit -n 266 && run capped -- --clock auto >/dev/null) || st=$?
check_that "capped: the run under RLIMIT_NOFILE 266 ended normally ($st)" [ "$st" -eq 0 ]
p=$(key "$work/capped.log" "#stats" clock.perf)
t=$(key "$work/capped.log" "#stats" clock.timer)
c=$(key "$work/capped.log" "#stats" clock.capped)
good=0
[ "$p" = 5 ] && [ "${t:-0}" -ge 1 ] && [ "$c" = "$t" ] && good=1
check_that "capped: 5 threads on perf, the others on the timer (clock.perf=$p clock.timer=$t clock.capped=$c)" \
    [ "$good" = 1 ]
n=$(grep -c "^# sampling: the perf_events CPU clock's cap on fds (5" "$work/capped.log" || true)
check_that "capped: the log says so, once ($n)" [ "$n" -eq 1 ]

# exact names with each clock
for c in ${PERFCLOCK_NAMES-perf refused}; do
    st=0
    if [ $c = refused ]; then
        MDPROFILE_TEST_PERF=refuse names_run perfclock-$c names 2500 >"$work/perfclock-$c.check" 2>&1 || st=$?
    else
        names_run perfclock-$c names 2500 --clock perf >"$work/perfclock-$c.check" 2>&1 || st=$?
    fi
    check_closing "$work/perfclock-$c.check" "$st"
    check_that "names ($c): cpu_clock=$(key "$work/perfclock-$c.log" "#mdprofile" cpu_clock)" \
        [ "$(key "$work/perfclock-$c.log" "#mdprofile" cpu_clock)" = "$([ $c = refused ] && echo timer || echo "$clock")" ]
done
check_done

#!/bin/sh
# The SIGPROF handler allocates nothing and takes no lock: the probe build
# of the profiler (sampler.c with MDP_HANDLER_PROBE) profiles the names
# workload with interpose.c preloaded, which counts calls of malloc & co.,
# the pthread mutex and rwlock functions and __tls_get_addr made inside the
# handler. The handler must have run often and made none; the probe's log
# still names every frame and caller, and resolves offline, like names.sh's
# (whether every case of the workload was sampled is names.sh's to check).
# A second run starves the drain thread (as starved.sh does), so that the
# ReadyToRun code the runtime reports before publishing it is never
# recorded: every step to a caller in it (the worker thread's
# Thread.StartCallback) goes through the module images' executable ranges
# (execmap.c), which the probe counts; that path too must have run, and
# made no forbidden call. The starved run uses the CPU-time timer (a full
# buffer then holds ~4x the CPU time it holds with the perf clock:
# starved.sh); the first --clock auto, so the perf clock's path (the slot
# from si_fd, the weight's clock read) is proven where perf is allowed.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
probe=$build/tests/profiler/.libs/libmdprofile_probe.so
pre=$build/tests/profiler/.libs/libmdpinterpose.so
[ -r "$probe" ] && [ -r "$pre" ] || fail "probe libraries not built"
# probe_run NAME MS [MDPROFILE-OPTION...]: the names workload for MS ms under the probe, its log
# in $work/NAME.log, the interposer's report in $work/NAME.report;
# environment assignments before it reach the profiled program
probe_run() {
    pname=$1 pms=$2
    shift 2
    rm -f "$work/$pname.report"
    MDPROFILE_PROFILER=$probe MDP_INTERPOSE_REPORT=$work/$pname.report \
        MDP_PRELOAD="${MDP_PRELOAD:+$MDP_PRELOAD:}$pre" \
        profile "$work/$pname.log" --debug-names "$@" -- dotnet "$workload" names "$work/$pname.expected" "$pms" \
        >"$work/$pname.out" 2>&1 || { cat "$work/$pname.out" >&2; fail "the profiled run ($pname) failed"; }
    [ -r "$work/$pname.report" ] || fail "no report from the interposer ($pname)"
    cat "$work/$pname.report"
}
# total KEY NAME: KEY summed over the report's lines (one per process)
total() {
    sed -n "s/.* $1=\([0-9]*\).*/\1/p" "$work/$2.report" | awk '{ s += $1 } END { print s + 0 }'
}
. "$top/tests/common/check.sh"
probe_run handler 1500 --clock auto
runs=$(total handler handler)
bad=$(total violations handler)
check_that "the handler ran $runs times (at least 200)" [ "$runs" -ge 200 ]
check_that "no allocation, lock or dynamic TLS call inside it ($bad: $(tr "\n" " " <"$work/handler.report"))" [ "$bad" -eq 0 ]
MDPROFILE_DRAIN_MS=60000 probe_run handler-starved 1500 --clock timer
runs=$(total handler handler-starved)
bad=$(total violations handler-starved)
steps=$(total execsteps handler-starved)
check_that "drain starved: the handler ran $runs times (at least 200)" [ "$runs" -ge 200 ]
check_that "drain starved: $steps steps to a caller through the executable ranges" [ "$steps" -gt 0 ]
check_that "drain starved: no allocation, lock or dynamic TLS call inside the handler ($bad: $(tr "\n" " " <"$work/handler-starved.report"))" [ "$bad" -eq 0 ]
st=0
check_offline handler "$work/handler.log" "$work/handler.expected" >"$work/handler.check" || st=$?
check_closing "$work/handler.check" "$st"
st=0
check starved "$work/handler-starved.log" "$work/handler-starved.expected" \
    >"$work/handler-starved.check" || st=$?
check_closing "$work/handler-starved.check" "$st"
summaries=$(cat "$work/handler.check" "$work/handler-starved.check" |
    grep -c '^[0-9]* passed, [0-9]* failed$' || true)
check_that "both logs checked ($summaries summaries)" [ "$summaries" -eq 2 ]
check_done

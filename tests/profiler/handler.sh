#!/bin/sh
# The SIGPROF handler allocates nothing and takes no lock: the probe build
# of the profiler (sampler.c with MDP_HANDLER_PROBE) profiles the names
# workload with interpose.c preloaded, which counts calls of malloc & co.,
# the pthread mutex and rwlock functions and __tls_get_addr made inside the
# handler. The handler must have run often and made none; the probe's log
# still names every frame and caller, and resolves offline, like names.sh's
# (whether every case of the workload was sampled is names.sh's to check).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
probe=$build/tests/profiler/.libs/libmdprofile_probe.so
pre=$build/tests/profiler/.libs/libmdpinterpose.so
[ -r "$probe" ] && [ -r "$pre" ] || fail "probe libraries not built"
report=$work/handler.report
rm -f "$report"
log=$work/handler.log
MDPROFILE_PROFILER=$probe MDP_INTERPOSE_REPORT=$report \
    MDP_PRELOAD="${MDP_PRELOAD:+$MDP_PRELOAD:}$pre" \
    profile "$log" --debug-names -- dotnet "$workload" names "$work/handler.expected" 1500 \
    >"$work/handler.out" 2>&1 || { cat "$work/handler.out" >&2; fail "the profiled run failed"; }
[ -r "$report" ] || fail "no report from the interposer"
cat "$report"
runs=$(sed -n 's/.*handler=\([0-9]*\).*/\1/p' "$report" | awk '{ s += $1 } END { print s + 0 }')
bad=$(sed -n 's/.*violations=\([0-9]*\).*/\1/p' "$report" | awk '{ s += $1 } END { print s + 0 }')
passed=0
failed=0
if [ "$runs" -ge 200 ]; then passed=$((passed + 1)); echo "ok   the handler ran $runs times"
else failed=$((failed + 1)); echo "FAIL the handler ran only $runs times"; fi
if [ "$bad" -eq 0 ]; then passed=$((passed + 1)); echo "ok   no allocation, lock or dynamic TLS call inside it"
else failed=$((failed + 1)); echo "FAIL $bad forbidden calls inside the handler: $(cat "$report")"; fi
check_offline handler "$log" "$work/handler.expected" >"$work/handler.check" || true
cat "$work/handler.check"
n=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' "$work/handler.check")
set -- $n
passed=$((passed + $1))
failed=$((failed + $2))
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]

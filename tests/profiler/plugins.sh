#!/bin/sh
# Sample mode over two collectible AssemblyLoadContexts that load, in turn,
# two different assemblies named Plugin and unload them: each plug-in's
# frames carry its own MVID and names, and its sample count matches its own
# CPU time (samples taken after an unload are never named after the
# unloaded plug-in). Offline, batch finds each plug-in by its MVID among
# both plug-ins' build outputs. The drain thread's period is made a minute long, so
# that only the drains the unload events make themselves save each
# plug-in's samples before its code goes; 16 frames a sample keep a phase's
# samples inside a thread's ring until then (deeper stacks, the runtime's
# own at startup, end in a `truncated` frame).
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
build_programs
log=$work/plugins.log
exp=$work/plugins.expected
MDPROFILE_DRAIN_MS=60000 profile "$log" --debug-names --depth 16 -- dotnet "$workload" plugins "$exp" "$work/bin/PluginA" "$work/bin/PluginB" \
    >"$work/plugins.out" 2>&1 || { cat "$work/plugins.out" >&2; fail "the profiled run failed"; }
check_offline plugins "$log" "$exp"

# Shared by the profiler's tests (sourced). Finds dotnet (or exits 77 with
# the reason), builds the C# test programs of data/profiler/ once per build
# tree (under a lock: tests run in parallel), and runs mdprofile.
#   MDT_TOP_SRCDIR, MDT_BUILDDIR  set by make check (tests/local.mk)
set -eu
top=${MDT_TOP_SRCDIR:?run from make check}
build=${MDT_BUILDDIR:?run from make check}
work=$build/tests/profiler
mdprofile=$build/profiler/mdprofile
export MDPROFILE_PROFILER=${MDPROFILE_PROFILER:-$build/profiler/.libs/libmdprofile.so}
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

skip() { echo "SKIP: $*" >&2; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v dotnet >/dev/null 2>&1 || skip "dotnet is not installed (the profiler tests need the .NET SDK)"
dotnet --list-runtimes 2>/dev/null | grep -q '^Microsoft.NETCore.App ' ||
    skip "dotnet has no Microsoft.NETCore.App runtime"
[ -x "$mdprofile" ] || fail "$mdprofile not built"
[ -x "$build/mdinspect/mdinspect" ] || fail "$build/mdinspect/mdinspect not built"
[ -r "$MDPROFILE_PROFILER" ] || fail "$MDPROFILE_PROFILER not built"

if [ "${MDT_SANITIZED:-0}" = 1 ]; then
    # The profiler is built with ASan+UBSan: its runtime must come first in
    # the process. CoreCLR handles SIGSEGV itself (null references) and
    # reserves large address ranges; it also leaves its own allocations to
    # the process's exit, so leak checking (which CI turns on) is off here,
    # after the caller's options so that it wins.
    asan=$(${CC:-cc} -print-file-name=libasan.so)
    [ -r "$asan" ] || skip "sanitized build, but libasan.so is not found"
    export MDP_PRELOAD="$asan"
    export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigill=0:handle_sigfpe=0:allow_user_segv_handler=1:use_sigaltstack=0:detect_stack_use_after_return=0"
    export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
fi

mkdir -p "$work"

# Build Workload, PluginA and PluginB into $work/bin/ (once; again when a
# source is newer than the stamp).
build_programs() {
    (
        flock 9
        stamp=$work/bin/.stamp
        if [ -f "$stamp" ] && [ -z "$(find "$top/data/profiler" -newer "$stamp" -type f | head -n 1)" ]; then
            exit 0
        fi
        rm -rf "$work/src" "$work/bin"
        mkdir -p "$work/src" "$work/bin"
        for p in Workload PluginA PluginB; do
            cp -R "$top/data/profiler/$p" "$work/src/$p"
            chmod -R u+w "$work/src/$p"
            (cd "$work/src/$p" && env -u LD_PRELOAD dotnet build -c Release -nologo -v q -nodeReuse:false \
                -p:UseSharedCompilation=false -o "$work/bin/$p" >"$work/src/$p.build.log" 2>&1) ||
                { cat "$work/src/$p.build.log" >&2; exit 1; }
        done
        touch "$stamp"
    ) 9>"$work/.build.lock" || fail "dotnet build of data/profiler failed"
}

workload="$work/bin/Workload/Workload.dll"

# data/profiler/Web, the ASP.NET Core minimal API, built once into
# $work/bin/Web (web.sh, bench/profiler/cost.sh); the caller has checked
# that dotnet has Microsoft.AspNetCore.App.
build_web() {
    (
        flock 9
        if [ ! -f "$work/bin/Web/.stamp" ] ||
            [ -n "$(find "$top/data/profiler/Web" "$top/data/profiler/Workload/Names.cs" -newer "$work/bin/Web/.stamp" -type f | head -n 1)" ]; then
            rm -rf "$work/src/Web" "$work/bin/Web"
            cp -R "$top/data/profiler/Web" "$work/src/Web"
            chmod -R u+w "$work/src/Web"
            (cd "$work/src/Web" && env -u LD_PRELOAD dotnet build -c Release -nologo -v q -nodeReuse:false \
                -p:UseSharedCompilation=false -o "$work/bin/Web" >"$work/src/Web.build.log" 2>&1) ||
                { cat "$work/src/Web.build.log" >&2; exit 1; }
            touch "$work/bin/Web/.stamp"
        fi
    ) 9>"$work/.build.lock" || fail "dotnet build of data/profiler/Web failed"
}

# profile LOG MODE-OPTIONS... -- COMMAND...
profile() {
    log=$1
    shift
    rm -f "$log"
    if [ -n "${MDP_PRELOAD:-}" ]; then
        LD_PRELOAD="$MDP_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" timeout 300 "$mdprofile" -o "$log" "$@"
    else
        timeout 300 "$mdprofile" -o "$log" "$@"
    fi
}

check() { python3 "$top/tests/profiler/check.py" "$@"; }

# check MODE LOG EXPECTED, then the log resolved offline by mdinspect batch
# against the test programs' build outputs and the shared framework of the
# dotnet that ran it (offline.py).
check_offline() {
    check "$@" --assemblies "$work/bin/Workload" "$work/bin/PluginA" "$work/bin/PluginB"
}

# names_run NAME MODE MS [MDPROFILE-OPTION...]: the names workload for MS
# ms (wall and CPU time), profiled with --debug-names and the options into
# $work/NAME.log, the program's own names in $work/NAME.expected; then
# checked as MODE and resolved offline. Environment assignments before it
# reach the profiled program.
names_run() {
    name=$1 mode=$2 ms=$3
    shift 3
    profile "$work/$name.log" --debug-names "$@" -- dotnet "$workload" names "$work/$name.expected" "$ms" \
        >"$work/$name.out" 2>&1 || { cat "$work/$name.out" >&2; fail "the profiled run failed"; }
    check_offline "$mode" "$work/$name.log" "$work/$name.expected"
}

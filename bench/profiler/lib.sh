# Sourced by bench/profiler's runs against dotnet-trace (run.sh, alloc.sh,
# events.sh, wall.sh) once they have set `top` (the source tree) and
# `build` (the build tree): what each of them did the same way. Builds
# data/profiler's programs (tests/profiler/common.sh's build_programs:
# $workload, $mdprofile) and names the folder dotnet-trace goes into.
MDT_TOP_SRCDIR=$top MDT_BUILDDIR=$build
export MDT_TOP_SRCDIR MDT_BUILDDIR
. "$top/tests/profiler/common.sh"
build_programs
tools=$build/bench/profiler/tools

# dotnet_trace_install LOGDIR: dotnet-trace from `dotnet tool install` into
# $tools (from the NuGet feed) unless it is there, the install's output in
# LOGDIR/install.log; sets $dotnet_trace.
dotnet_trace_install() {
    if [ ! -x "$tools/dotnet-trace" ]; then
        dotnet tool install dotnet-trace --tool-path "$tools" >"$1/install.log" 2>&1 ||
            { cat "$1/install.log" >&2; exit 1; }
    fi
    dotnet_trace=$tools/dotnet-trace
}

# rotate ROUNDS FUNC CONFIG...: ROUNDS rounds of `FUNC CONFIG ROUND` for
# every CONFIG, the order rotated by one each round so that no
# configuration always runs right after another.
rotate() {
    _rounds=$1
    _func=$2
    shift 2
    _configs=$*
    _n=$#
    _round=1
    while [ $_round -le "$_rounds" ]; do
        set -- $_configs
        _i=1
        while [ $_i -lt $(( (_round - 1) % _n + 1 )) ]; do
            _first=$1
            shift
            set -- "$@" "$_first"
            _i=$((_i + 1))
        done
        for _cfg in "$@"; do
            "$_func" "$_cfg" "$_round"
        done
        _round=$((_round + 1))
    done
}

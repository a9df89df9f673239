#!/bin/bash
# mdtools against System.Reflection.Metadata (SRM), same workloads, same
# inputs, same checks (bench/srm/README.md):
#   cells-A / cells-B   every cell of mscorlib / of the framework, row API
#                       (bench_md) and column API (bench_md -c) against
#                       SRM's typed row accessors (SRM has no column API)
#   sig                 decode and print every MethodDef and MemberRef
#                       signature, TypeSpec and MethodSpec (bench_sig_md,
#                       talloc API, -b buffer API, -n one call
#                       (mdt_sig_name_of_token), -n --pool the same with
#                       the caller's scratch context a talloc pool, -a
#                       one call into a name arena)
#   names               LINES (file, MethodDef) pairs to full names
#                       (bench_names_md)
#   batch               `mdinspect batch -t 1` on the same LINES `PATH TOKEN`
#                       lines against bench_srm batch (single-threaded)
# SRM runs under its default tiered JIT, with DOTNET_TieredCompilation=0,
# and compiled ReadyToRun (skipped, saying so, if it cannot be built).
#
# Usage: bench/srm/run.sh [builddir]     (default: <srcdir>/build)
# Env:   RUNS=5       process runs of each program, interleaved
#        SRUNS=3      steady-state processes of each program, interleaved;
#                     each runs a warm-up pass and PASSES timed passes
#        PASSES=5
#        LINES=1000000
#        ONLY="cells-A sig ..."   a subset of the workloads
#        MONO_LIB=/usr/lib/mono/4.5
# Process figures: CPU (user + system) and wall of the whole process
# (bash's time), median and min-max of RUNS. Steady figures: process CPU
# time of each timed pass (CLOCK_PROCESS_CPUTIME_ID inside the program),
# median and min-max over SRUNS x PASSES passes. Ratios are mdtools / the
# best SRM variant (below 1: mdtools takes less). Exits 1 if the two sides
# disagree on a sum, a count or a printed name.
set -eu
export LC_ALL=C DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=$(cd "${1:-$srcdir/build}" && pwd)
RUNS=${RUNS:-5}
SRUNS=${SRUNS:-3}
PASSES=${PASSES:-5}
LINES=${LINES:-1000000}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
ONLY=${ONLY:-cells-A cells-B sig names batch}

MD=$builddir/bench/bench_md
SIG=$builddir/bench/sig/bench_sig_md
NAMES=$builddir/bench/srm/bench_names_md
GEN=$builddir/bench/batch/gen
MDI=$builddir/mdinspect/.libs/mdinspect
[ -x "$MDI" ] || MDI=$builddir/mdinspect/mdinspect
for p in "$MD" "$SIG" "$NAMES" "$GEN" "$MDI"; do
    [ -x "$p" ] || { echo "run.sh: $p not built (make -C $builddir)" >&2; exit 2; }
done
command -v dotnet >/dev/null || { echo "run.sh: needs dotnet (an SDK for net10.0)" >&2; exit 2; }
ls "$MONO_LIB/mscorlib.dll" >/dev/null || exit 2
export LD_LIBRARY_PATH=$builddir/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# The C# side, built into the build tree (never the source tree).
out=$builddir/bench/srm/dotnet
mkdir -p "$out"
proj=$srcdir/bench/srm/BenchSrm.csproj
echo "== building bench_srm (dotnet) into $out" >&2
dotnet build "$proj" -c Release -o "$out/jit" -p:BaseIntermediateOutputPath="$out/obj-jit/" \
    -p:BaseOutputPath="$out/bin-jit/" >"$out/build-jit.log" 2>&1 ||
    { echo "run.sh: dotnet build failed:" >&2; tail -20 "$out/build-jit.log" >&2; exit 2; }
variants=(jit notier)
if dotnet publish "$proj" -c Release -r linux-x64 -p:PublishReadyToRun=true --self-contained false \
    -o "$out/r2r" -p:BaseIntermediateOutputPath="$out/obj-r2r/" -p:BaseOutputPath="$out/bin-r2r/" \
    >"$out/build-r2r.log" 2>&1; then
    variants+=(r2r)
else
    echo "run.sh: ReadyToRun skipped: dotnet publish -p:PublishReadyToRun=true failed" \
         "(the crossgen package must come from the NuGet feed); see $out/build-r2r.log" >&2
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

A=("$MONO_LIB/mscorlib.dll")
B=("$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll)
"$GEN" path "$LINES" "${B[@]}" >"$tmp/path.txt" 2>/dev/null

# srm VARIANT ARGS...: the SRM program under a variant.
srm() {
    local v=$1; shift
    case $v in
    jit) "$out/jit/bench_srm" "$@" ;;
    notier) DOTNET_TieredCompilation=0 "$out/jit/bench_srm" "$@" ;;
    r2r) "$out/r2r/bench_srm" "$@" ;;
    esac
}

# cmdline WORKLOAD SIDE [--passes N]: runs one side of a workload; the
# report line on stdout.
cmdline() {
    local w=$1 side=$2; shift 2
    case $w:$side in
    cells-A:md) "$MD" "$@" "${A[@]}" ;;
    cells-A:col) "$MD" -c "$@" "${A[@]}" ;;
    cells-B:md) "$MD" "$@" "${B[@]}" ;;
    cells-B:col) "$MD" -c "$@" "${B[@]}" ;;
    cells-A:*) srm "$side" cells "$@" "${A[@]}" ;;
    cells-B:*) srm "$side" cells "$@" "${B[@]}" ;;
    sig:md) "$SIG" "$@" "${B[@]}" ;;
    sig:mdbuf) "$SIG" -b "$@" "${B[@]}" ;;
    sig:mdone) "$SIG" -n "$@" "${B[@]}" ;;
    sig:mdonepool) "$SIG" -n --pool "$@" "${B[@]}" ;;
    sig:mdarena) "$SIG" -a "$@" "${B[@]}" ;;
    sig:*) srm "$side" sig "$@" "${B[@]}" ;;
    names:md) "$NAMES" "$@" "$tmp/path.txt" ;;
    names:*) srm "$side" names "$@" "$tmp/path.txt" ;;
    batch:md) "$MDI" batch --no-progress -t 1 <"$tmp/path.txt" >"$tmp/out.batch.md" ;;
    batch:*) srm "$side" batch "$@" "$tmp/path.txt" "$tmp/out.batch.$side" ;;
    esac
}

sides_of() {
    case $1 in
    cells-*) echo md col "${variants[@]}" ;;
    sig) echo md mdbuf mdone mdonepool mdarena "${variants[@]}" ;;
    *) echo md "${variants[@]}" ;;
    esac
}

# stats: "median min max" of numbers on stdin.
stats() { sort -n | awk '{v[NR]=$1} END { if (NR) print v[int((NR+1)/2)], v[1], v[NR]; else print "- - -" }'; }
field() { tr ' ' '\n' <<<"$2" | sed -n "s/^$1=//p"; }

status=0
# check WORKLOAD KEYS...: every side's report agrees with mdtools' on KEYS.
check() {
    local w=$1; shift
    local ref side k a b bad
    ref=$(cat "$tmp/line.$w.md")
    for side in $(sides_of "$w"); do
        [ "$side" = md ] && continue
        bad=
        for k in "$@"; do
            a=$(field "$k" "$ref")
            b=$(field "$k" "$(cat "$tmp/line.$w.$side")")
            [ "$a" = "$b" ] || bad="$bad $k(mdtools=$a $side=$b)"
        done
        if [ -n "$bad" ]; then
            echo "- $w $side: **MISMATCH**:$bad"
            status=1
        fi
    done
}

TIMEFORMAT='%U %S %R'
start=$(date +%s)
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
for w in $ONLY; do
    sides=$(sides_of "$w")
    echo "== $w: $sides" >&2
    # Warm the page cache and keep one report line per side for the checks.
    for side in $sides; do
        [ "$w" = batch ] && [ "$side" = md ] && { cmdline "$w" md || true; echo "ok" >"$tmp/line.$w.md"; continue; }
        cmdline "$w" "$side" >"$tmp/line.$w.$side" 2>"$tmp/err" ||
            { echo "run.sh: $w $side failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
    done
    # Whole processes, interleaved.
    for ((i = 0; i < RUNS; i++)); do
        for side in $sides; do
            # bash's time: user, system (this shell's children: the
            # program alone) and wall seconds.
            { time cmdline "$w" "$side" >/dev/null 2>&1 || true; } 2>>"$tmp/proc.$w.$side"
        done
    done
    # Steady state: in-process passes after a warm-up pass, interleaved.
    for ((i = 0; i < SRUNS; i++)); do
        for side in $sides; do
            [ "$w" = batch ] && [ "$side" = md ] && continue # one pass per process
            cmdline "$w" "$side" --passes "$PASSES" >"$tmp/s" 2>/dev/null || true
            field pass_cpu_ns "$(cat "$tmp/s")" | tr ',' '\n' >>"$tmp/steady.$w.$side"
            field pass_wall_ns "$(cat "$tmp/s")" | tr ',' '\n' >>"$tmp/steadyw.$w.$side"
        done
    done
done

echo
echo "Machine: $(nproc) CPU(s), $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)," \
     "$(uname -sr), $(dotnet --version 2>/dev/null | sed 's/^/.NET SDK /');" \
     "load average $load_start at start, $(cut -d' ' -f1-3 /proc/loadavg) at end"
echo "RUNS=$RUNS process runs, SRUNS=$SRUNS x PASSES=$PASSES steady passes; LINES=$LINES; SRM variants: ${variants[*]}"
echo

label() {
    case $1 in
    md) echo "mdtools" ;; col) echo "mdtools column API" ;; mdbuf) echo "mdtools buffer API" ;;
    mdone) echo "mdtools one call (mdt_sig_name_of_token)" ;;
    mdonepool) echo "mdtools one call, caller's talloc pool" ;;
    mdarena) echo "mdtools one call into a name arena (mdt_sig_name_of_token_arena)" ;;
    jit) echo "SRM tiered JIT" ;; notier) echo "SRM TieredCompilation=0" ;; r2r) echo "SRM ReadyToRun" ;;
    esac
}
s3() { awk -v m="$1" -v lo="$2" -v hi="$3" -v d="$4" 'BEGIN { if (m == "-") print "-"; else printf "%.3f (%.3f-%.3f)", m / d, lo / d, hi / d }'; }

echo "| workload | side | process CPU s | process wall s | steady CPU s a pass | steady wall s a pass |"
echo "|---|---|---:|---:|---:|---:|"
for w in $ONLY; do
    for side in $(sides_of "$w"); do
        read -r pc pcl pch < <(awk '{print $1 + $2}' "$tmp/proc.$w.$side" | stats)
        read -r pw pwl pwh < <(awk '{print $3}' "$tmp/proc.$w.$side" | stats)
        if [ -s "$tmp/steady.$w.$side" ]; then
            read -r sc scl sch < <(stats <"$tmp/steady.$w.$side")
            read -r sw swl swh < <(stats <"$tmp/steadyw.$w.$side")
        else
            sc=- scl=- sch=- sw=- swl=- swh=-
        fi
        echo "| $w | $(label "$side") | $(s3 "$pc" "$pcl" "$pch" 1) | $(s3 "$pw" "$pwl" "$pwh" 1) |" \
             "$(s3 "$sc" "$scl" "$sch" 1e9) | $(s3 "$sw" "$swl" "$swh" 1e9) |"
    done
done 2>/dev/null || true

echo
echo "Ratios, mdtools / the best SRM variant (median CPU; below 1: mdtools takes less; goal of issue 28: <= 0.5 steady):"
echo
echo "| workload | mdtools side | process | best SRM (process) | steady | best SRM (steady) |"
echo "|---|---|---:|---|---:|---|"
for w in $ONLY; do
    bp= bpv= bs= bsv=
    for v in "${variants[@]}"; do
        p=$(awk '{print $1 + $2}' "$tmp/proc.$w.$v" | stats | cut -d' ' -f1)
        s=$(stats <"$tmp/steady.$w.$v" | cut -d' ' -f1)
        if [ -z "$bp" ] || awk -v a="$p" -v b="$bp" 'BEGIN { exit !(a < b) }'; then bp=$p bpv=$v; fi
        if [ "$s" != - ] && { [ -z "$bs" ] || awk -v a="$s" -v b="$bs" 'BEGIN { exit !(a < b) }'; }; then bs=$s bsv=$v; fi
    done
    for side in $(sides_of "$w"); do
        case $side in md | col | mdbuf | mdone | mdonepool | mdarena) ;; *) continue ;; esac
        p=$(awk '{print $1 + $2}' "$tmp/proc.$w.$side" | stats | cut -d' ' -f1)
        s=$( { stats <"$tmp/steady.$w.$side"; } 2>/dev/null | cut -d' ' -f1)
        rp=$(awk -v a="$p" -v b="$bp" 'BEGIN { printf "%.2f", a / b }')
        if [ -n "$s" ] && [ "$s" != - ] && [ -n "$bs" ]; then
            rs=$(awk -v a="$s" -v b="$bs" 'BEGIN { printf "%.2f", a / b }')
        elif [ -n "$bs" ]; then
            # mdinspect runs one pass a process: its whole process (start-up
            # included, ~1 ms) against SRM's warm pass.
            rs="$(awk -v a="$p" -v b="$bs" 'BEGIN { printf "%.2f", a / (b / 1e9) }') (process)"
        else
            rs=-
        fi
        echo "| $w | $(label "$side") | **$rp** | $(label "$bpv") | **$rs** | $(label "${bsv:-}") |"
    done
done

echo
echo "Agreement:"
check cells-A files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other errors 2>/dev/null || true
check cells-B files rows cells str_bytes blob_bytes guid_bytes guid_sum raw_other errors 2>/dev/null || true
check sig files methoddefs memberrefs typespecs methodspecs sigs errors bytes 2>/dev/null || true
check names names errors bytes 2>/dev/null || true
# The names themselves, byte for byte: mdtools' against SRM's (one variant:
# the program is the same).
case " $ONLY " in *" sig "*)
    "$SIG" -p "${B[@]}" | grep -v '^side=' | md5sum >"$tmp/h.md"
    srm jit sig -p "${B[@]}" | md5sum >"$tmp/h.srm"
    "$SIG" -n -p "${B[@]}" | grep -v '^side=' | md5sum >"$tmp/h.one"
    "$SIG" -a -p "${B[@]}" | grep -v '^side=' | md5sum >"$tmp/h.arena"
    cmp -s "$tmp/h.md" "$tmp/h.srm" && cmp -s "$tmp/h.md" "$tmp/h.one" && cmp -s "$tmp/h.md" "$tmp/h.arena" &&
        echo "- sig: printed names identical, talloc API, one call, arena and SRM ($(cut -c1-12 "$tmp/h.md"))" ||
        { echo "- sig: printed names **DIFFER**"; status=1; } ;;
esac
case " $ONLY " in *" names "*)
    "$NAMES" -p "$tmp/path.txt" | md5sum >"$tmp/h.md"
    srm jit names -p "$tmp/path.txt" | md5sum >"$tmp/h.srm"
    cmp -s "$tmp/h.md" "$tmp/h.srm" && echo "- names: printed names identical ($(cut -c1-12 "$tmp/h.md"))" ||
        { echo "- names: printed names **DIFFER**"; status=1; } ;;
esac
case " $ONLY " in *" batch "*)
    for v in "${variants[@]}"; do
        cmp -s "$tmp/out.batch.md" "$tmp/out.batch.$v" && echo "- batch $v: output identical to mdinspect's" ||
            { echo "- batch $v: output **DIFFERS** from mdinspect's"; status=1; }
    done ;;
esac
echo
echo "Run took $(( $(date +%s) - start )) s."
exit $status

#!/bin/sh
# bench/lazy/run.sh: what reading only what a command needs
# (mdt_image_open_file's MDT_OPEN_LAZY, issue 28) does for the two clients
# that open many files, against reading every file whole at open (the
# default) and against mapping it (what batch did before), side by side:
#
#   bench/lazy/run.sh NAME=MDINSPECT...   ROUNDS=7 LINES=1000000 CG_LINES=200000 WORKS="batch shell"
#
# Each VARIANT names an mdinspect binary built from a tree that differs
# only in the flags of its open calls (e.g. read=/tmp/read/build/mdinspect/
# .libs/mdinspect map=... lazy=...); each is run with the library of its own
# build (LD_LIBRARY_PATH from the binary's path). Workloads, for the Mono
# 4.5 framework (269 files, 46 MB: IL and metadata) and the .NET shared
# framework (ReadyToRun images: System.Private.CoreLib.dll is 15 MB, most
# of it native code):
#   batch  `mdinspect batch --no-progress -t 1` on LINES `PATH TOKEN` lines
#          (bench/batch/gen, fixed seed) over every file with methods;
#   shell  `mdinspect -i` on every file of the framework, running `modules`.
# Rounds interleave the variants (the order rotates each round). Per
# variant: median user+system CPU (the child's rusage) with min-max, median peak
# RSS; then instructions of one run under callgrind (CG_LINES lines for
# batch; user space only: the copy inside pread is the kernel's and
# callgrind does not see it, the CPU time does). The outputs of the
# variants are compared: they must be the same bytes.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
ROUNDS=${ROUNDS:-7}
LINES=${LINES:-1000000}
CG_LINES=${CG_LINES:-200000}
mono=/usr/lib/mono/4.5
net=$(ls -d /usr/share/dotnet/shared/Microsoft.NETCore.App/* 2>/dev/null | tail -n 1)
gen=${GEN:-$src/build/bench/batch/gen}
[ $# -ge 2 ] || { echo "usage: run.sh NAME=MDINSPECT NAME=MDINSPECT..." >&2; exit 2; }
for p in "$gen" python3; do
    command -v "$p" >/dev/null || { echo "run.sh: $p is missing" >&2; exit 1; }
done
for p in "$gen"; do
    [ -x "$p" ] || { echo "run.sh: $p is missing" >&2; exit 1; }
done
[ -d "$mono" ] || { echo "run.sh: no $mono (Debian mono-runtime)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
monofiles=$(ls "$mono"/*.dll "$mono"/Facades/*.dll)
"$gen" path "$LINES" $monofiles >"$tmp/in.mono" 2>/dev/null
head -n "$CG_LINES" "$tmp/in.mono" >"$tmp/cg.mono"
fws=mono
if [ -n "$net" ]; then
    netfiles=$(ls "$net"/*.dll)
    "$gen" path "$LINES" $netfiles >"$tmp/in.net" 2>/dev/null
    head -n "$CG_LINES" "$tmp/in.net" >"$tmp/cg.net"
    fws="mono net"
fi
echo modules >"$tmp/cmds"
# /usr/bin/time prints CPU to 10 ms; a child's rusage has microseconds.
# Runs argv[3:] with stdin, stdout and stderr as given; appends to argv[2]
# "NAME USER_S SYS_S MAXRSS_KB".
rusage='
import os, resource, subprocess, sys
subprocess.run(sys.argv[3:])
r = resource.getrusage(resource.RUSAGE_CHILDREN)
open(sys.argv[2], "a").write("%s %.6f %.6f %d\n" % (sys.argv[1], r.ru_utime, r.ru_stime, r.ru_maxrss))
'

# libdir BIN: the library of the build BIN (BUILD/mdinspect/[.libs/]mdinspect) is of
libdir() {
    d=$(dirname "$1")
    case $d in */.libs) d=$(dirname "$d") ;; esac
    echo "$(dirname "$d")/libmdtools/.libs"
}

# run NAME BIN WORK FW INPUT: one run, output on stdout
run() {
    lib=$(libdir "$2")
    if [ "$3" = batch ]; then
        LD_LIBRARY_PATH=$lib "$2" batch --no-progress -t 1 <"$5"
    elif [ "$4" = mono ]; then
        LD_LIBRARY_PATH=$lib "$2" -i $monofiles <"$tmp/cmds"
    else
        LD_LIBRARY_PATH=$lib "$2" -i $netfiles <"$tmp/cmds"
    fi
}

echo "== load $(cut -d' ' -f1-3 /proc/loadavg), CPUs $(nproc), $LINES lines, $ROUNDS rounds"
for fw in $fws; do
    for work in ${WORKS:-batch shell}; do
        # warm-up and output check
        first=
        for v in "$@"; do
            name=${v%%=*} bin=${v#*=}
            run "$name" "$bin" $work $fw "$tmp/in.$fw" >"$tmp/out.$name" 2>/dev/null || true
            if [ -z "$first" ]; then
                first=$name
            elif ! cmp -s "$tmp/out.$first" "$tmp/out.$name"; then
                echo "run.sh: $name and $first print different output ($work, $fw)" >&2
                exit 1
            fi
        done
        : >"$tmp/t"
        r=0
        while [ $r -lt "$ROUNDS" ]; do
            n=$#
            for k in $(seq 0 $((n - 1))); do
                j=$(((k + r) % n + 1))
                eval "v=\${$j}"
                name=${v%%=*} bin=${v#*=}
                # the measured run
                lib=$(libdir "$bin")
                if [ $work = batch ]; then
                    LD_LIBRARY_PATH=$lib python3 -c "$rusage" "$name" "$tmp/one" \
                        "$bin" batch --no-progress -t 1 <"$tmp/in.$fw" >/dev/null 2>&1 || true
                elif [ $fw = mono ]; then
                    LD_LIBRARY_PATH=$lib python3 -c "$rusage" "$name" "$tmp/one" \
                        "$bin" -i $monofiles <"$tmp/cmds" >/dev/null 2>&1 || true
                else
                    LD_LIBRARY_PATH=$lib python3 -c "$rusage" "$name" "$tmp/one" \
                        "$bin" -i $netfiles <"$tmp/cmds" >/dev/null 2>&1 || true
                fi
                tail -n 1 "$tmp/one" >>"$tmp/t"
                rm -f "$tmp/one"
            done
            r=$((r + 1))
        done
        echo "-- $work, $fw framework"
        awk -v first="${1%%=*}" '
            { cpu[$1] = cpu[$1] " " ($2 + $3); rss[$1] = rss[$1] " " $4; if (!($1 in seen)) { seen[$1] = 1; order[++n] = $1 } }
            function med(s,   a, m, i, j, t) { m = split(s, a, " "); for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
                lo = a[1]; hi = a[m]; return a[int((m + 1) / 2)] }
            END {
                for (k = 1; k <= n; k++) { v = order[k]; c[v] = med(cpu[v]); clo[v] = lo; chi[v] = hi; r[v] = med(rss[v]) }
                for (k = 1; k <= n; k++) { v = order[k]
                    printf "%-6s cpu %.4f s (%.4f-%.4f)  rss %.1f MB  cpu/%s %.2fx  rss/%s %.2fx\n", v, c[v], clo[v], chi[v], r[v] / 1024, first, (c[first] > 0 ? c[v] / c[first] : 0), first, r[v] / r[first] }
            }' "$tmp/t"
        for v in "$@"; do
            name=${v%%=*} bin=${v#*=}
            lib=$(libdir "$bin")
            rm -f "$tmp/cg.out"
            if [ $work = batch ]; then
                LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
                    "$bin" batch --no-progress -t 1 <"$tmp/cg.$fw" >/dev/null 2>"$tmp/cg.err" || true
            elif [ $fw = mono ]; then
                LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
                    "$bin" -i $monofiles <"$tmp/cmds" >/dev/null 2>"$tmp/cg.err" || true
            else
                LD_LIBRARY_PATH=$lib valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
                    "$bin" -i $netfiles <"$tmp/cmds" >/dev/null 2>"$tmp/cg.err" || true
            fi
            ir=$(sed -n 's/^==[0-9]*== Collected : //p' "$tmp/cg.err")
            echo "$name instructions ${ir:-?}"
        done
    done
done

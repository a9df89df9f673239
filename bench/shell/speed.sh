#!/bin/sh
# mdinspect's long commands over the whole Mono 4.5 framework (4.5/*.dll
# and 4.5/Facades/*.dll as one set): `validate -a`, `memberrefs -a`,
# `find *`, `types -a`. For each: instructions executed (callgrind, exact
# and steady however busy the machine is), then wall, user and system time
# (medians of RUNS runs; noisy on a shared machine), and the size of the
# output. With a second build directory (an older mdinspect, e.g. main
# before a change), the same for it and the ratios, in the same run.
#
# Usage: bench/shell/speed.sh BUILDDIR [BASE_BUILDDIR]
# Env:   RUNS=5                       timed runs per command
#        CMDS='validate -a|...'       the commands, '|'-separated (the default
#                                     below; spellings an older mdinspect takes)
#        MONO_LIB=/usr/lib/mono/4.5   where the assemblies are
#        CALLGRIND=yes                count instructions (needs valgrind)
# Prints a markdown table. See README.md.
set -eu
export LC_ALL=C

RUNS=${RUNS:-5}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
CALLGRIND=${CALLGRIND:-yes}
[ $# -ge 1 ] || { echo "usage: $0 BUILDDIR [BASE_BUILDDIR]" >&2; exit 2; }

# The program itself, not libtool's wrapper script: prints "PROG LIBDIR".
prog_of() {
    if [ -x "$1/mdinspect/.libs/mdinspect" ]; then
        echo "$1/mdinspect/.libs/mdinspect $1/libmdtools/.libs"
    elif [ -x "$1/mdinspect/mdinspect" ]; then
        echo "$1/mdinspect/mdinspect -"
    else
        echo "speed.sh: no mdinspect built in $1" >&2
        exit 2
    fi
}
ls "$MONO_LIB"/*.dll >/dev/null 2>&1 || { echo "speed.sh: no assemblies in $MONO_LIB" >&2; exit 2; }
if [ "$CALLGRIND" = yes ] && ! command -v valgrind >/dev/null; then
    echo "speed.sh: valgrind not found: instruction counts left out" >&2
    CALLGRIND=no
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-speed.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
globs="$MONO_LIB/*.dll $MONO_LIB/Facades/*.dll"

# measure LABEL BUILDDIR COMMAND: one line "label|command|instr|wall|user|sys|bytes".
measure() {
    set -- "$1" $(prog_of "$2") "$3"
    label=$1 prog=$2 libdir=$3 cmd=$4
    [ "$libdir" = - ] || export LD_LIBRARY_PATH="$libdir"
    instr=-
    if [ "$CALLGRIND" = yes ]; then
        valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$prog" -c "open $globs; $cmd" \
            >/dev/null 2>"$tmp/cg.err" || true
        instr=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p; s/.*I *refs: *\([0-9,]*\).*/\1/p' \
            "$tmp/cg.err" | tr -d , | tail -n 1)
    fi
    bytes=$("$prog" -c "open $globs; $cmd" 2>/dev/null | wc -c)
    : >"$tmp/times"
    r=0
    while [ $r -lt "$RUNS" ]; do
        /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$prog" -c "open $globs; $cmd" >/dev/null 2>&1 || true
        cat "$tmp/t" >>"$tmp/times"
        r=$((r + 1))
    done
    med() { sort -n | awk '{a[NR]=$1} END {print a[int((NR + 1) / 2)]}'; }
    wall=$(cut -d' ' -f1 "$tmp/times" | med)
    user=$(cut -d' ' -f2 "$tmp/times" | med)
    sys=$(cut -d' ' -f3 "$tmp/times" | med)
    echo "$label|$cmd|$instr|$wall|$user|$sys|$bytes"
    unset LD_LIBRARY_PATH
}

[ -x /usr/bin/time ] || { echo "speed.sh: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
CMDS=${CMDS:-validate -a|memberrefs --all|find *|types -a}
IFS='|'
set -f
for cmd in $CMDS; do
    unset IFS
    measure new "$1" "$cmd" >>"$tmp/rows"
    [ $# -ge 2 ] && measure base "$2" "$cmd" >>"$tmp/rows"
    IFS='|'
done
unset IFS
set +f

nfiles=$(ls $globs | wc -l)
echo "$nfiles files; $RUNS timed runs per command (medians); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | build | instructions | wall | user | system | output | instructions vs base |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"
awk -F'|' '
    $1 == "base" { base[$2] = $3 }
    { rows[NR] = $0 }
    END {
        for (i = 1; i <= NR; i++) {
            split(rows[i], f, "|")
            ratio = ""
            if (f[1] == "new" && (f[2] in base) && f[3] != "-" && base[f[2]] != "-")
                ratio = sprintf("%.1fx fewer", base[f[2]] / f[3])
            instr = "-"
            if (f[3] != "-")
                instr = sprintf("%.2f G", f[3] / 1e9)
            printf "| %s | %s | %s | %s s | %s s | %s s | %.1f MB | %s |\n", f[2], f[1], instr, f[4], f[5], f[6], f[7] / 1e6, ratio
        }
    }' "$tmp/rows"

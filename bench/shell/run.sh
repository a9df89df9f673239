#!/bin/sh
# mdinspect's module-set benchmark: open the whole Mono 4.5 framework
# (4.5/*.dll and 4.5/Facades/*.dll, about 270 files) as one set and list
# every type of every module (`types -a`), against the peer `monodis
# --typedef` over the same files, in the same run. See README.md.
#
# Usage: bench/shell/run.sh [BUILDDIR]       (default: <srcdir>/build)
# Env:   RUNS=10                       timed runs per command
#        MONO_LIB=/usr/lib/mono/4.5    where the assemblies are
#
# Times are wall-clock medians (hyperfine when installed, which also gives
# user and system CPU; otherwise a loop around date +%s%N). Before timing,
# the script checks that both tools see the same number of TypeDef rows.
# Prints a markdown table.
set -eu
export LC_ALL=C

srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-$srcdir/build}
RUNS=${RUNS:-10}
MONO_LIB=${MONO_LIB:-/usr/lib/mono/4.5}
MDI=$builddir/mdinspect/mdinspect

[ -x "$MDI" ] || { echo "run.sh: $MDI is not built (make -C $builddir)" >&2; exit 2; }
# Time the program itself, not libtool's wrapper script around it.
if [ -x "$builddir/mdinspect/.libs/mdinspect" ]; then
    MDI=$builddir/mdinspect/.libs/mdinspect
    LD_LIBRARY_PATH=$builddir/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
command -v monodis >/dev/null || { echo "run.sh: needs monodis (mono-utils)" >&2; exit 2; }
command -v python3 >/dev/null || { echo "run.sh: needs python3" >&2; exit 2; }
ls "$MONO_LIB"/*.dll >/dev/null 2>&1 || { echo "run.sh: no assemblies in $MONO_LIB" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

nfiles=$(ls "$MONO_LIB"/*.dll "$MONO_LIB"/Facades/*.dll | wc -l)
globs="$MONO_LIB/*.dll $MONO_LIB/Facades/*.dll"

# The commands. mdinspect expands the globs itself (`open` takes globs);
# the peer is one monodis process per file, as monodis takes one file.
cat >"$tmp/monodis.sh" <<SH
for f in $globs; do monodis --typedef "\$f"; done
SH
cat >"$tmp/mdi-each.sh" <<SH
for f in $globs; do "$MDI" -c types "\$f"; done
SH
cmd_open="'$MDI' -c 'open $globs'"
cmd_types="'$MDI' -c 'open $globs; types -a'"
cmd_json="'$MDI' -j -c 'open $globs; types -a'"
cmd_find="'$MDI' -c 'open $globs; find *Concurrent*'"
cmd_each="sh '$tmp/mdi-each.sh'"
cmd_peer="sh '$tmp/monodis.sh'"

# Same work: TypeDef rows seen by each side.
n_mdi=$(eval "$cmd_json" | grep -c '"token"')
n_peer=$(sh "$tmp/monodis.sh" 2>/dev/null | grep -c '^[0-9][0-9]*: ')
if [ "$n_mdi" != "$n_peer" ]; then
    echo "run.sh: mdinspect lists $n_mdi types, monodis $n_peer" >&2
    exit 1
fi
n_mods=$(eval "$cmd_json" | wc -l)
n_open=$("$MDI" -j -c "open $globs" | wc -l)

names="open|types -a|types -a --json|find *Concurrent*|mdinspect per file|monodis --typedef per file"
if command -v hyperfine >/dev/null; then
    hyperfine -N --style none --warmup 2 --runs "$RUNS" --export-json "$tmp/h.json" \
        --output=null "$cmd_open" "$cmd_types" "$cmd_json" "$cmd_find" "$cmd_each" "$cmd_peer" \
        >/dev/null 2>&1 ||
        hyperfine --style none --warmup 2 --runs "$RUNS" --export-json "$tmp/h.json" \
            "$cmd_open >/dev/null" "$cmd_types >/dev/null" "$cmd_json >/dev/null" \
            "$cmd_find >/dev/null" "$cmd_each >/dev/null" "$cmd_peer >/dev/null 2>&1" >/dev/null
    tool="hyperfine $(hyperfine --version | cut -d' ' -f2), $RUNS runs after 2 warm-ups"
else
    : >"$tmp/loop.txt"
    i=0
    for c in "$cmd_open" "$cmd_types" "$cmd_json" "$cmd_find" "$cmd_each" "$cmd_peer"; do
        r=0
        while [ $r -lt "$RUNS" ]; do
            t0=$(date +%s%N)
            eval "$c" >/dev/null 2>&1
            t1=$(date +%s%N)
            echo "$i $(( (t1 - t0) ))" >>"$tmp/loop.txt"
            r=$((r + 1))
        done
        i=$((i + 1))
    done
    tool="shell loop, $RUNS runs"
fi

python3 - "$tmp" "$names" "$tool" "$nfiles" "$n_open" "$n_mdi" <<'PY'
import json, os, statistics, sys
tmp, names, tool, nfiles, nopen, ntypes = sys.argv[1:7]
names = names.split("|")
rows = []
if os.path.exists(os.path.join(tmp, "h.json")):
    for name, r in zip(names, json.load(open(os.path.join(tmp, "h.json")))["results"]):
        rows.append((name, r["median"], r["user"], r["system"]))
else:
    times = {}
    for line in open(os.path.join(tmp, "loop.txt")):
        i, ns = line.split()
        times.setdefault(int(i), []).append(int(ns) / 1e9)
    for i, name in enumerate(names):
        rows.append((name, statistics.median(times[i]), None, None))
peer = rows[-1][1]
print("%s files (%s opened as modules), %s types; %s" % (nfiles, nopen, ntypes, tool))
print()
print("| command | wall (median) | user | system | vs monodis |")
print("| --- | ---: | ---: | ---: | ---: |")
for name, wall, user, system in rows:
    fmt = lambda v: "-" if v is None else "%.3f s" % v
    print("| %s | %s | %s | %s | %.1fx |" % (name, fmt(wall), fmt(user), fmt(system), peer / wall))
PY

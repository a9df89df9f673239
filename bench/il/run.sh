#!/bin/sh
# Disassembling every method body of a module: `mdinspect il -a` against
# ILDasm (NuGet runtime.linux-x64.Microsoft.NETCore.ILDAsm) and monodis, on
# System.Private.CoreLib of the installed .NET and on Mono 4.5's
# mscorlib.dll. CPU time (user + system of the child) of ROUNDS interleaved
# rounds: each round runs every command once, in a rotated order, output to
# /dev/null. Prints medians, min-max and the ratios of the medians. See
# README.md for what each tool prints (the work is not identical).
#
# Usage: bench/il/run.sh [BUILDDIR]     (default: <srcdir>/build)
# Env:   ROUNDS=7; ILDASM=path (default: the one tests/il/diff-ildasm.sh
#        fetched into BUILDDIR/tests/il/nuget); CORELIB=..., MSCORLIB=...
set -eu
export LC_ALL=C
srcdir=$(cd "$(dirname "$0")/../.." && pwd)
builddir=${1:-$srcdir/build}
ROUNDS=${ROUNDS:-7}
MDI=$builddir/mdinspect/mdinspect
[ -x "$MDI" ] || { echo "run.sh: $MDI is not built" >&2; exit 2; }
if [ -x "$builddir/mdinspect/.libs/mdinspect" ]; then
    MDI=$builddir/mdinspect/.libs/mdinspect
    LD_LIBRARY_PATH=$builddir/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
ILDASM=${ILDASM:-$(ls "$builddir"/tests/il/nuget/pkgs/runtime.linux-x64.microsoft.netcore.ildasm/*/runtimes/linux-x64/native/ildasm 2>/dev/null | tail -1)}
[ -x "${ILDASM:-}" ] || { echo "run.sh: no ildasm (run tests/il/diff-ildasm.sh once, or set ILDASM)" >&2; exit 2; }
CORELIB=${CORELIB:-$(ls /usr/share/dotnet/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.dll 2>/dev/null | tail -1)}
MSCORLIB=${MSCORLIB:-/usr/lib/mono/4.5/mscorlib.dll}
exec python3 - "$MDI" "$ILDASM" "$CORELIB" "$MSCORLIB" "$ROUNDS" <<'PY'
import os, resource, statistics, subprocess, sys
mdi, ildasm, corelib, mscorlib, rounds = sys.argv[1:6]
rounds = int(rounds)
cases = []
for lib in (corelib, mscorlib):
    if not os.path.isfile(lib):
        continue
    cases.append((lib, [
        ("mdinspect il -a", [mdi, "-c", "il -a", lib]),
        ("mdinspect il -a --raw", [mdi, "-c", "il -a --raw", lib]),
        ("ildasm", [ildasm, lib]),
        ("ildasm -tokens -bytes", [ildasm, "-tokens", "-bytes", lib]),
        ("monodis", ["monodis", lib]),
    ]))
def cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime
for lib, cmds in cases:
    times = {n: [] for n, _ in cmds}
    for r in range(rounds):
        order = cmds[r % len(cmds):] + cmds[:r % len(cmds)]
        for name, argv in order:
            t0 = cpu()
            subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            times[name].append(cpu() - t0)
    med = {n: statistics.median(v) for n, v in times.items()}
    print("%s, %d interleaved rounds, CPU seconds (user+system)" % (os.path.basename(lib), rounds))
    print()
    print("| command | median | min-max | ildasm / this | monodis / this |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for name, _ in cmds:
        v = times[name]
        print("| %s | %.3f | %.3f-%.3f | %.2fx | %.1fx |" % (name, med[name], min(v), max(v),
              med["ildasm"] / med[name], med["monodis"] / med[name]))
    print()
PY

#!/bin/sh
# mdinspect batch --signatures tells overloads apart (issue 24), on the
# real framework: every MethodDef named Sum of System.Linq.Enumerable in
# the installed .NET's System.Linq.dll, or else Mono 4.5's System.Core.dll
# (skipped, 77, without either):
#  - without --signatures they all print the same name, with it no two do;
#  - the non-generic Int64 overload is
#    `System.Linq.Enumerable::Sum(System.Collections.Generic.IEnumerable<System.Int64>)`;
#  - a generic overload (Sum<TSource>(IEnumerable<TSource>, Func<TSource,Int64>))
#    named by a log frame with its method argument <I4> has it substituted:
#    `...::Sum<System.Int32>(System.Collections.Generic.IEnumerable<System.Int32>,System.Func<System.Int32,System.Int64>)`,
#    and by a plain line without one, its parameters by name (TSource);
#  - the shell with `set signatures on` names every one as batch does.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-signatures.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-signatures.sh: python3 is needed" >&2; exit 77; }
lib=
for d in /usr/share/dotnet/shared/Microsoft.NETCore.App/* /usr/lib/dotnet/shared/Microsoft.NETCore.App/*; do
    [ -f "$d/System.Linq.dll" ] && lib=$d/System.Linq.dll
done
[ -n "$lib" ] || { [ -f /usr/lib/mono/4.5/System.Core.dll ] && lib=/usr/lib/mono/4.5/System.Core.dll; }
[ -n "$lib" ] || { echo "batch-signatures.sh: no System.Linq.dll (.NET) nor System.Core.dll (Mono 4.5)" >&2; exit 77; }
LC_ALL=C
export LC_ALL

python3 - "$prog" "$lib" <<'PY'
import json, subprocess, sys
prog, lib = sys.argv[1:3]
from mdtcheck import check, done

def out(args, data=None):
    return subprocess.run([prog] + args, input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=300).stdout

sums = [json.loads(l) for l in out(["-j", "-c", "find Sum", lib]).split("\n") if l]
sums = [o for o in sums if o.get("kind") == "method" and o["name"] == "System.Linq.Enumerable::Sum"]
tokens = [o["token"] for o in sums]
lines = "".join("%s %s\n" % (lib, t) for t in tokens)
plain = out(["batch", "--no-progress"], lines).split("\n")[:-1]
sig = out(["batch", "--no-progress", "--signatures"], lines).split("\n")[:-1]
check(len(tokens) >= 10 and len(set(plain)) == 1 and len(set(sig)) == len(tokens),
      "%d overloads of Enumerable::Sum in %s: one name without --signatures, %d with it"
      % (len(tokens), lib.split("/")[-1], len(set(sig))))
want = "System.Linq.Enumerable::Sum(System.Collections.Generic.IEnumerable<System.Int64>)"
check(want in sig, "the Int64 overload is %s" % want)

# the generic overload with a selector to Int64, named by a log frame
mvid = json.loads(out(["-j", "-c", "info", lib]).split("\n")[0])["mvid"].replace("-", "")
generic = [t for t, n in zip(tokens, sig)
           if n == "System.Linq.Enumerable::Sum(System.Collections.Generic.IEnumerable<TSource>,"
                    "System.Func<TSource,System.Int64>)"]
check(len(generic) == 1, "a plain line names the generic overload's parameters: %r" % generic)
if generic:
    log = "stack 1 %s:%s<I4>\n" % (mvid, generic[0])
    got = out(["batch", "--no-progress", "--signatures", "-a", lib], log)
    want = ("stack 1\tSystem.Linq.Enumerable::Sum<System.Int32>(System.Collections.Generic."
            "IEnumerable<System.Int32>,System.Func<System.Int32,System.Int64>)")
    check(got.startswith(want), "a log frame <I4> substitutes it: %r" % got.strip())

# the shell agrees
cmds = ["-c", "set signatures on"]
for t in tokens:
    cmds += ["-c", "token " + t]
shell = [json.loads(l)["name"] for l in out(["-j"] + cmds + [lib]).split("\n")
         if l.startswith("{") and '"name"' in l and '"token"' in l]
check(shell == sig, "the shell with `set signatures on` names all %d as batch does" % len(sig))
done()
PY

#!/bin/sh
# `derived` on the real shared framework (issue 26): in
# System.Private.CoreLib, `derived System.IO.Stream` lists MemoryStream,
# FileStream, BufferedStream, UnmanagedMemoryStream; over the whole
# framework directory `derived -a System.IO.Stream` also finds streams of
# other assemblies, whose base is a TypeRef to System.Runtime forwarded
# to CoreLib (NetworkStream, DeflateStream, CryptoStream), and
# UnmanagedMemoryStreamWrapper through MemoryStream at depth 2; and a
# fixture compiled against System.Runtime (data/decl/Decl.dll) implements
# CoreLib's IComparable<T> through the forwarder. JSON: one record with a
# "derived" list. Exit 77 when no .NET shared framework is installed.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "derived-framework.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "derived-framework.sh: python3 is needed" >&2; exit 77; }
fw=
for d in /usr/share/dotnet/shared/Microsoft.NETCore.App/* /usr/lib/dotnet/shared/Microsoft.NETCore.App/*; do
    [ -f "$d/System.Private.CoreLib.dll" ] && [ -f "$d/System.Runtime.dll" ] && fw=$d
done
[ -n "$fw" ] || { echo "derived-framework.sh: no .NET shared framework (System.Private.CoreLib.dll)" >&2; exit 77; }
exec python3 - "$prog" "$fw" "$top/data/decl/Decl.dll" <<'PY'
import json, subprocess, sys
prog, fw, decl = sys.argv[1:4]
from mdtcheck import check, done

def run(cmds, *files):
    out = subprocess.run([prog, '-j', '-c', cmds] + list(files), capture_output=True, text=True,
                         timeout=300)
    recs = [json.loads(l) for l in out.stdout.splitlines() if l.startswith('{')]
    return out.returncode, [r for r in recs if 'derived' in r]

rc, recs = run('derived System.IO.Stream', fw + '/System.Private.CoreLib.dll')
names = {d['name'] for d in recs[0]['derived']} if recs else set()
check(rc == 0 and len(recs) == 1, 'derived System.IO.Stream in CoreLib: exit 0, one record')
for want in ['System.IO.MemoryStream', 'System.IO.FileStream', 'System.IO.BufferedStream',
             'System.IO.UnmanagedMemoryStream']:
    check(want in names, 'CoreLib: %s extends Stream' % want)
check(all(d['relation'] == 'extends' for d in recs[0]['derived']) if recs else False,
      'CoreLib: Stream is a class: every one extends it')

rc, recs = run('open ' + fw + '; derived -a System.IO.Stream')
ds = recs[0]['derived'] if recs else []
byname = {d['name']: d for d in ds}
check(rc == 0 and len(recs) == 1, 'derived -a System.IO.Stream over the framework: exit 0')
for want, mod in [('System.Net.Sockets.NetworkStream', 'System.Net.Sockets.dll'),
                  ('System.IO.Compression.DeflateStream', 'System.IO.Compression.dll'),
                  ('System.Security.Cryptography.CryptoStream', 'System.Security.Cryptography.dll')]:
    d = byname.get(want)
    check(d is not None and d['module'] == mod and d['depth'] == 1,
          'framework: %s (%s) extends Stream through a forwarded TypeRef' % (want, mod))
d = byname.get('System.IO.UnmanagedMemoryStreamWrapper')
check(d is not None and d['depth'] == 2 and d['parent']['name'] == 'System.IO.MemoryStream',
      'framework: UnmanagedMemoryStreamWrapper at depth 2, through MemoryStream')
keys = [(d['module'], d['token']) for d in ds]
check(len(keys) == len(set(keys)), 'framework: each type once (%d)' % len(keys))

rc, recs = run('open %s/System.Runtime.dll %s; derived System.IComparable`1' % (fw, decl),
               fw + '/System.Private.CoreLib.dll')
ds = recs[0]['derived'] if recs else []
sq = [d for d in ds if d['name'] == 'Decl.Square']
check(rc == 0 and len(sq) == 1 and sq[0]['relation'] == 'implements',
      'Decl.Square implements CoreLib\'s IComparable<T> (IComparable<Square>, via System.Runtime)')
done()
PY

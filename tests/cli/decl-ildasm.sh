#!/bin/sh
# Generic declarations against ILDasm (issue 26): the generic parameter
# lists of every generic type and method of data/decl/Decl.dll (every
# special constraint, `allows ref struct`, `unmanaged`, variance,
# constraints naming the parameters) as mdinspect's IL style declares them
# (`type` in JSON: the type's and its methods' "declaration") and as the
# .NET ILDasm prints them (`.class ... Decl.Holder`6<class TClass,...>`,
# `.method ... As<class T>(...)`). ILDasm is NuGet's
# runtime.linux-x64.Microsoft.NETCore.ILDAsm, fetched into the build tree
# by tests/il/fetch-tool.sh ($ILDASM names another); exit 77 saying why
# when it cannot be had. Whitespace after a comma is not compared (ILDasm
# breaks long lines there). Prints one line per declaration compared and
# "N compared, M differ".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
dll=$top/data/decl/Decl.dll
[ -x "$prog" ] || { echo "decl-ildasm.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "decl-ildasm.sh: python3 is needed" >&2; exit 77; }
ildasm=${ILDASM:-}
if [ -z "$ildasm" ]; then
    ildasm=$("$top/tests/il/fetch-tool.sh" ildasm "$build")
    rc=$?
    [ $rc -eq 0 ] || exit $rc
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
# ILDasm writes resources into the current directory: run it in the scratch one.
(cd "$tmp" && "$ildasm" "$dll" > "$tmp/ildasm.il" 2>&1) ||
    { echo "decl-ildasm.sh: $ildasm failed:" >&2; tail -3 "$tmp/ildasm.il" >&2; exit 99; }
exec python3 - "$prog" "$dll" "$tmp/ildasm.il" <<'PY'
import json, re, subprocess, sys

prog, dll, ilfile = sys.argv[1:4]

def generic_list(text, start):
    """The balanced <...> that opens at text[start], or None."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == '<':
            depth += 1
        elif text[i] == '>':
            depth -= 1
            if depth == 0:
                return text[start:i + 1]
    return None

def norm(s):
    return re.sub(r'\s*,\s*', ',', s)

def method_list(header):
    """The generic list of a method header: the <...> right before '('."""
    for m in re.finditer(r"[A-Za-z_0-9.']<", header):
        lst = generic_list(header, m.end() - 1)
        if lst and header[m.end() - 1 + len(lst):].startswith('('):
            name = re.findall(r"[A-Za-z_0-9.']+$", header[:m.end() - 1])
            return (name[-1] if name else '?'), lst
    return None, None

# ILDasm: each header joined over its continuation lines.
peer = {}
lines = open(ilfile, encoding='utf-8', errors='replace').read().split('\n')
cls = None
i = 0
while i < len(lines):
    l = lines[i].strip()
    if l.startswith('.class '):
        h = l
        while i + 1 < len(lines) and not re.match(r'\s*(extends|implements|\{)', lines[i + 1]):
            i += 1
            h += lines[i].strip()
        if ' nested ' in h:
            cls = None  # nested types are named by their enclosing ones: not compared
        else:
            m = re.search(r'(Decl\.[A-Za-z_0-9`]+)(<)?', h)
            cls = m.group(1) if m else None
            if m and m.group(2):
                peer[cls] = generic_list(h, m.start(2))
    elif l.startswith('.method ') and cls:
        h = l
        while 'cil managed' not in h and i + 1 < len(lines):
            i += 1
            h += ' ' + lines[i].strip()
        name, lst = method_list(h)
        if lst:
            peer[cls + '::' + name] = lst
    i += 1

ours = {}
for c in sorted({k.split('::')[0] for k in peer}):
    out = subprocess.run([prog, '-j', '--style=il', '-c', 'type ' + c, dll],
                         capture_output=True, text=True)
    rec = json.loads(out.stdout.splitlines()[0])
    d = rec.get('declaration', '')
    j = d.find('<')
    ours[c] = generic_list(d, j) if j >= 0 else None
    for meth in rec.get('methods', []):
        name, lst = method_list(meth.get('declaration', ''))
        if lst:
            ours[c + '::' + meth['name']] = lst

compared = differ = 0
for k in sorted(set(peer) | set(ours)):
    a, b = peer.get(k), ours.get(k)
    compared += 1
    if a is not None and b is not None and norm(a) == norm(b):
        print('same  %s %s' % (k, b))
    else:
        differ += 1
        print('DIFF  %s\n  ildasm:    %s\n  mdinspect: %s' % (k, a, b))
print('%d compared, %d differ' % (compared, differ))
sys.exit(1 if differ or compared < 8 else 0)
PY

#!/bin/sh
# Strong-name verification (mdinspect sn, mdt_strongname_verify) against
# Mono's `sn -v` and against what is known of real assemblies (issue 26):
#  1. every assembly of Mono's 4.5 class libraries (and Facades) verifies,
#     with the keys of Mono's machine.config (--sn-keys), and `sn -v`
#     agrees on each one;
#  2. tampered copies of data/Everything.dll, Mono's System.dll and
#     mscorlib.dll (the ECMA key): a changed IL byte, a changed #Strings
#     byte and a changed signature byte fail, both here and in `sn -v`; a
#     changed checksum, a changed certificate table entry, a changed byte
#     of the header padding and bytes appended to the file do not;
#  3. the installed .NET shared framework: every IL-only assembly verifies
#     (the Microsoft key for the ECMA key included), every ReadyToRun one
#     is "not checkable" because it was rewritten after signing;
#  4. copies re-signed with SHA-256, SHA-384 and SHA-512 keys
#     (tests/strongname/resign.py) verify, and fail once changed.
# Parts whose inputs are missing are skipped and say so; with none of
# Mono's sn, Mono's 4.5 libraries or a .NET framework the script exits 77.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "sn-diff.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "sn-diff.sh: python3 is needed" >&2; exit 77; }
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdt-sn.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

exec python3 - "$prog" "$top" "$here/resign.py" "$tmp" <<'PY'
import glob, json, os, shutil, struct, subprocess, sys
prog, top, resign, tmp = sys.argv[1:5]
from mdtcheck import check, done

mono = '/usr/lib/mono/4.5'
config = '/etc/mono/4.5/machine.config'
have_sn = shutil.which('sn') is not None and shutil.which('mono') is not None
have_mono = os.path.isfile(os.path.join(mono, 'mscorlib.dll')) and os.path.isfile(config)
frameworks = sorted(glob.glob('/usr/share/dotnet/shared/Microsoft.NETCore.App/*/') +
                    glob.glob('/usr/lib/dotnet/shared/Microsoft.NETCore.App/*/'))
if not have_mono and not frameworks:
    print("sn-diff.sh: neither Mono's 4.5 libraries nor a .NET shared framework", file=sys.stderr)
    sys.exit(77)
keys = ['--sn-keys', config] if have_mono else []

def sn_status(paths):
    """mdinspect sn over many files in one run: path -> record."""
    r = subprocess.run([prog] + keys + ['--json', '-c', 'sn'] + paths, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=600)
    out = {}
    for line in r.stdout.splitlines():
        d = json.loads(line)
        out[d['file']] = d
    return out

def mono_sn(path):
    r = subprocess.run(['sn', '-q', '-v', path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=120)
    return r.returncode == 0

# 1. Mono's class libraries
if have_mono:
    libs = sorted(glob.glob(mono + '/*.dll') + glob.glob(mono + '/Facades/*.dll'))
    got = sn_status(libs)
    ok = [p for p in libs if got.get(p, {}).get('status') == 'verified']
    check(len(libs) > 100 and len(ok) == len(libs),
          "%d of Mono's %d 4.5 assemblies verify (%d with Mono's key from machine.config)"
          % (len(ok), len(libs), sum(got[p].get('key_source') == 'given' for p in ok)))
    bad = [p for p in libs if p not in ok][:5]
    if bad:
        print('  not verified: ' + ', '.join('%s %s' % (p, got.get(p, {}).get('reason')) for p in bad))
    if have_sn:
        # `sn -v` starts a Mono runtime per file: two at a time.
        import concurrent.futures
        with concurrent.futures.ThreadPoolExecutor(2) as ex:
            theirs = dict(zip(libs, ex.map(mono_sn, libs)))
        agree = [p for p in libs if theirs[p] == (p in ok)]
        check(len(agree) == len(libs), "sn -v agrees on %d of %d" % (len(agree), len(libs)))
        for p in [p for p in libs if p not in agree][:5]:
            print('  disagree: %s (sn -v %s)' % (p, theirs[p]))
    else:
        print("SKIP sn -v comparison: Mono's sn is not installed (mono-devel)")
else:
    print("SKIP Mono's 4.5 libraries: not installed (mono-devel)")

# 2. tampered copies
def pe_facts(path):
    return json.loads(subprocess.run([prog, '--json', '-c', 'pe', path], stdout=subprocess.PIPE,
                                     text=True, timeout=60).stdout.splitlines()[0])

def rva_to_off(facts, rva):
    for s in facts['sections']:
        if s['virtual_address'] <= rva < s['virtual_address'] + max(s['virtual_size'], s['raw_size']):
            return s['raw_pointer'] + rva - s['virtual_address']
    raise ValueError(rva)

def first_il_byte(path, facts):
    rows = subprocess.run([prog, '--json', '-c', 'dump MethodDef', path], stdout=subprocess.PIPE,
                          text=True, timeout=60).stdout.splitlines()
    d = open(path, 'rb').read()
    for line in rows:
        rva = json.loads(line).get('RVA')
        if rva:
            off = rva_to_off(facts, rva)
            return off + (1 if d[off] & 3 == 2 else 12)
    raise ValueError('no method body')

def strings_byte(path):
    info = json.loads(subprocess.run([prog, '--json', '-c', 'info', path], stdout=subprocess.PIPE,
                                     text=True, timeout=60).stdout.splitlines()[0])
    s = [x for x in info['streams'] if x['stream'] == '#Strings'][0]
    return info['metadata_offset'] + s['offset'] + 1

def variants(path):
    facts = pe_facts(path)
    d = open(path, 'rb').read()
    lfanew = facts['e_lfanew']
    sn = sn_status([path])[path]
    sig = sn['signature']['file_offset']
    first_raw = min(s['raw_pointer'] for s in facts['sections'] if s['raw_size'])
    table_end = lfanew + 24 + facts['size_of_optional_header'] + 40 * facts['number_of_sections']
    cert = lfanew + 24 + (112 if facts['magic'] == 0x20b else 96) + 32
    def flip(at):
        b = bytearray(d)
        b[at] ^= 0x5a
        return bytes(b)
    v = [('a changed IL byte', flip(first_il_byte(path, facts)), 'invalid (hash mismatch)'),
         ('a changed #Strings byte', flip(strings_byte(path)), 'invalid (hash mismatch)'),
         ('a changed signature byte', flip(sig + 5), 'invalid (bad signature)'),
         ('a changed checksum', flip(lfanew + 24 + 64), 'verified'),
         ('a changed certificate table entry', flip(cert + 2), 'verified'),
         ('bytes appended', d + b'\x01' * 512, 'verified')]
    if table_end < first_raw:
        v.append(('a changed byte of the header padding', flip(table_end + 1), 'verified'))
    return v

targets = [os.path.join(top, 'data/Everything.dll')]
if have_mono:
    targets += [mono + '/System.dll', mono + '/mscorlib.dll']
for t in targets:
    name = os.path.basename(t)
    for what, data, want in variants(t):
        p = os.path.join(tmp, name)
        open(p, 'wb').write(data)
        st = sn_status([p])[p]['status']
        ok = st == want
        verifies = want == 'verified'
        if have_sn:
            theirs = mono_sn(p)
            check(ok and theirs == verifies, "%s with %s: %s; sn -v %s"
                  % (name, what, st, 'verifies' if theirs else 'fails'))
        else:
            check(ok, "%s with %s: %s" % (name, what, st))

# 3. the .NET shared framework
for fw in frameworks[-1:]:
    dlls = sorted(glob.glob(fw + '*.dll'))
    got = sn_status(dlls)
    il = [p for p in dlls if p in got and not got[p]['ready_to_run'] and got[p]['status'] != 'not signed']
    r2r = [p for p in dlls if p in got and got[p]['ready_to_run']]
    il_ok = [p for p in il if got[p]['status'] == 'verified']
    ecma = [p for p in il_ok if got[p]['key_source'] == 'ecma']
    check(len(il) > 10 and len(il_ok) == len(il) and ecma,
          "%s: %d of %d IL-only assemblies verify (%d with the Microsoft key for the ECMA key)"
          % (fw, len(il_ok), len(il), len(ecma)))
    r2r_ok = [p for p in r2r if got[p]['status'] == 'not checkable' and 'ReadyToRun' in got[p]['reason']]
    check(len(r2r) > 10 and len(r2r_ok) == len(r2r),
          "%d of %d ReadyToRun assemblies are not checkable, rewritten after signing"
          % (len(r2r_ok), len(r2r)))
if not frameworks:
    print('SKIP the .NET shared framework: not installed')

# 4. SHA-2 keys
for alg in ('sha256', 'sha384', 'sha512'):
    p = os.path.join(tmp, 'Everything-%s.dll' % alg)
    subprocess.run([sys.executable, resign, os.path.join(top, 'data/Everything.dll'), p, alg, '26'],
                   check=True, timeout=120)
    a = sn_status([p])[p]
    d = bytearray(open(p, 'rb').read())
    d[first_il_byte(p, pe_facts(p))] ^= 0x5a
    open(p, 'wb').write(d)
    b = sn_status([p])[p]
    check(a['status'] == 'verified' and a['hash_algorithm'] == alg.upper().replace('SHA', 'SHA-')
          and b['status'] == 'invalid (hash mismatch)',
          "re-signed with a %s key: %s (%s); with a changed IL byte: %s"
          % (alg, a['status'], a['hash_algorithm'], b['status']))

done()
PY

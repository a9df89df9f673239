#!/bin/sh
# `resources -x` writes resources out safely (issue 26): on the fixture
# data/resources/Res.dll and copies of it whose resource names or
# Implementation cells were changed (tests/corrupt/make-cases.py parses
# them):
#  - `-x NAME DIR` writes the bytes of the resource (those of its source,
#    data/src/), `-x -a DIR` every embedded one and skips the linked one;
#    naming a linked resource or a resource that is not there fails;
#  - a file that exists is kept without --force and replaced with it; a
#    symbolic link or a FIFO at the name is refused even with --force (and
#    the FIFO does not block), and what the link points at is untouched;
#  - names from the image that are no plain file name ("../x", "a/b",
#    "..\x", "..", a control character) are refused, and nothing is
#    written anywhere but DIR;
#  - a resource in another assembly (Implementation an AssemblyRef) is
#    listed as such and skipped by -x -a; an Implementation that is an
#    ExportedType is a located error in the listing and in `resources NAME`.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "extract.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "extract.sh: python3 is needed" >&2; exit 77; }
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdt-resx.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

exec python3 - "$prog" "$top" "$tmp" <<'PY'
import importlib.util, json, os, stat, subprocess, sys
prog, top, tmp = sys.argv[1:4]
spec = importlib.util.spec_from_file_location("mc", os.path.join(top, "tests/corrupt/make-cases.py"))
mc = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mc)
from mdtcheck import check, done

def run(cmd, path, timeout=20):
    try:
        r = subprocess.run([prog, "-c", cmd, path], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=timeout)
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""

def tree(d):
    out = []
    for root, dirs, files in os.walk(d):
        for f in dirs + files:
            out.append(os.path.relpath(os.path.join(root, f), d))
    return sorted(out)

res = os.path.join(top, "data/resources/Res.dll")
src = os.path.join(top, "data/src")
def read(p):
    with open(p, "rb") as f:
        return f.read()

# Plain extraction.
d = os.path.join(tmp, "one")
os.mkdir(d)
rc, out = run("resources -x Res.Notes.txt '%s'" % d, res)
check(rc == 0 and tree(d) == ["Res.Notes.txt"] and
      read(os.path.join(d, "Res.Notes.txt")) == read(os.path.join(src, "Res.Notes.txt")),
      "-x NAME DIR writes the resource's bytes", out)
with open(os.path.join(d, "Res.Notes.txt"), "wb") as f:
    f.write(b"kept")
rc, out = run("resources -x Res.Notes.txt '%s'" % d, res)
check(rc == 1 and "exists" in out and read(os.path.join(d, "Res.Notes.txt")) == b"kept",
      "a file that exists is kept without --force (exit 1, says so)", out)
rc, out = run("resources -x Res.Notes.txt --force '%s'" % d, res)
check(rc == 0 and read(os.path.join(d, "Res.Notes.txt")) == read(os.path.join(src, "Res.Notes.txt")),
      "--force replaces it", out)

# A symbolic link and a FIFO at the name.
victim = os.path.join(tmp, "victim")
with open(victim, "wb") as f:
    f.write(b"untouched")
os.symlink(victim, os.path.join(d, "Res.Logo.bin"))
rc, out = run("resources -x Res.Logo.bin --force '%s'" % d, res)
check(rc == 1 and "symbolic link" in out and read(victim) == b"untouched",
      "a symbolic link at the name is refused with --force; its target is untouched", out)
os.mkfifo(os.path.join(d, "Res.Strings.resources"))
rc, out = run("resources -x Res.Strings.resources --force '%s'" % d, res, timeout=10)
check(rc == 1 and "not a regular file" in out and
      stat.S_ISFIFO(os.lstat(os.path.join(d, "Res.Strings.resources")).st_mode),
      "a FIFO at the name is refused with --force, without blocking", out)

# Everything, and what is not embedded.
a = os.path.join(tmp, "all")
os.mkdir(a)
rc, out = run("resources -x -a '%s'" % a, res)
check(rc == 0 and tree(a) == ["Res.Logo.bin", "Res.Notes.txt", "Res.Strings.resources"] and
      read(os.path.join(a, "Res.Logo.bin")) == read(os.path.join(src, "Res.Logo.bin")) and
      "skipped" in out and "ResNotes.txt" in out,
      "-x -a DIR writes every embedded resource and skips the linked one", out)
rc, out = run("resources -x Res.Linked.txt '%s'" % a, res)
check(rc == 1 and "lives in file ResNotes.txt" in out, "-x of a linked resource fails", out)
rc, out = run("resources -x Nothing.txt '%s'" % a, res)
check(rc == 1 and "no manifest resource named 'Nothing.txt'" in out,
      "-x of a name that is not there fails", out)
rc, out = run("resources -x Res.Notes.txt '%s'" % os.path.join(tmp, "missing"), res)
check(rc == 1 and "missing" in out, "-x into a directory that is not there fails", out)
rc, out = run("resources -a", res)
check(rc == 1 and "go with -x" in out, "-a without -x is refused", out)

# Hostile names: "Res.Logo.bin" (12 bytes) rewritten in #Strings.
data = bytearray(read(res))
pe = mc.PE(data)
def renamed(new):
    b = bytearray(data)
    old = b"Res.Logo.bin\0"
    i = b.find(old, pe.md_off)
    assert i > 0 and len(new) <= 12
    b[i:i + 13] = new + b"\0" * (13 - len(new))
    return bytes(b)
for new, why in ((b"../evil.bin", "a path separator"), (b"a/b/evil.bin", "a path separator"),
                 (b"..\\evil.bin", "a path separator"), (b"..", ". or .."),
                 (b"Res\nLogo.bin", "a control character"), (b"", "an empty name")):
    p = os.path.join(tmp, "hostile.dll")
    with open(p, "wb") as f:
        f.write(renamed(new))
    box = os.path.join(tmp, "box")
    inner = os.path.join(box, "out")
    os.makedirs(inner, exist_ok=True)
    for n in os.listdir(inner):
        os.unlink(os.path.join(inner, n))
    before = tree(tmp)
    rc, out = run("resources -x -a '%s'" % inner, p)
    after = tree(tmp)
    made = sorted(set(after) - set(before))
    check(rc == 1 and "refused" in out and why in out and
          made == ["box/out/Res.Notes.txt", "box/out/Res.Strings.resources"],
          "a resource named %r is refused (%s); the others are written, nothing else"
          % (new.decode(), why), "%s\nmade: %s" % (out, made))

# Implementation pointed at an AssemblyRef (mscorlib, row 1): the
# resource lives in another assembly.
b = bytearray(data)
ok = False
for rid in range(1, pe.md.rows(mc.TABLE_ID["ManifestResource"]) + 1):
    if pe.md.string(b, pe.md.get(b, "ManifestResource", rid, "Name")) == "Res.Notes.txt":
        pe.md.set(b, "ManifestResource", rid, "Implementation", 1 << 2 | 1)
        ok = True
p = os.path.join(tmp, "elsewhere.dll")
with open(p, "wb") as f:
    f.write(b)
r = subprocess.run([prog, "--json", "-c", "resources", p], stdout=subprocess.PIPE, text=True)
recs = {j["name"]: j for j in map(json.loads, r.stdout.splitlines())}
e = recs.get("Res.Notes.txt", {})
check(ok and r.returncode == 0 and e.get("where") == "assembly" and
      e.get("implementation") == "0x23000001" and e.get("implementation_name") == "mscorlib" and
      e.get("size") is None, "a resource in another assembly is listed as such", r.stdout)
o = os.path.join(tmp, "else")
os.mkdir(o)
rc, out = run("resources -x -a '%s'" % o, p)
check(rc == 0 and "lives in assembly mscorlib" in out and
      tree(o) == ["Res.Logo.bin", "Res.Strings.resources"], "-x -a skips it", out)
# Implementation an ExportedType (tag 2; tests/damage seed 5 pointed it
# at itself): the listing and `resources NAME` say why, exit 1, no abort.
b = bytearray(data)
for rid in range(1, pe.md.rows(mc.TABLE_ID["ManifestResource"]) + 1):
    if pe.md.string(b, pe.md.get(b, "ManifestResource", rid, "Name")) == "Res.Notes.txt":
        pe.md.set(b, "ManifestResource", rid, "Implementation", 1 << 2 | 2)
p = os.path.join(tmp, "exported.dll")
with open(p, "wb") as f:
    f.write(b)
rc, out = run("resources", p)
rc2, out2 = run("resources Res.Notes.txt", p)
check(rc == 1 and rc2 == 1 and "column Implementation" in out and "column Implementation" in out2 and
      "Res.Logo.bin" in out, "an Implementation that is an ExportedType is a located error",
      out + out2)
done()
PY

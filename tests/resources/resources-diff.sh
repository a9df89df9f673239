#!/bin/sh
# Manifest resources (mdinspect resources, <mdtools/resources.h>) against
# Mono's tools, over the fixture data/resources/Res.dll, Mono's 4.5 class
# libraries and the newest installed .NET shared framework (issue 26):
#  1. `resources -x -a DIR` writes the same files, byte for byte, as
#     `monodis --mresources` (which writes every embedded resource into the
#     current directory), and the listing's embedded resources are those
#     files with those sizes;
#  2. every extracted resource in the System.Resources format lists the
#     same entries, in the same order, with the same types and value sizes
#     as Mono's System.Resources.ResourceReader (GetResourceData; a small
#     C# program compiled here with mcs), and string values equal
#     ResourceReader's.
# Parts whose tools or inputs are missing are skipped and say so; without
# mcs, mono and monodis the script exits 77. MDT_RESOURCES_MAX_FILES
# (default: all) caps the assemblies taken from each folder.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "resources-diff.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "resources-diff.sh: python3 is needed" >&2; exit 77; }
for tool in mcs mono monodis; do
    command -v "$tool" >/dev/null 2>&1 || {
        echo "resources-diff.sh: $tool not found (Debian: mono-devel, mono-utils)" >&2
        exit 77
    }
done
LC_ALL=C
export LC_ALL
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdt-res.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

# ResourceReader's view: name, type (ResourceTypeCode.X as the library
# names it), the value's size, and a string's text in hex (UTF-8).
cat >"$tmp/rr.cs" <<'EOF'
using System;
using System.Collections;
using System.Resources;
using System.Text;
class ResList {
    static string TypeName(string t) {
        if (!t.StartsWith("ResourceTypeCode.")) return t;
        string c = t.Substring(17);
        switch (c) {
        case "Null": return "null";
        case "ByteArray": return "System.Byte[]";
        case "Stream": return "System.IO.Stream";
        default: return "System." + c;
        }
    }
    static int Main(string[] args) {
        foreach (string f in args) {
            Console.WriteLine("# " + f);
            try {
                using (ResourceReader r = new ResourceReader(f)) {
                    IDictionaryEnumerator e = r.GetEnumerator();
                    while (e.MoveNext()) {
                        string type; byte[] data;
                        r.GetResourceData((string)e.Key, out type, out data);
                        string text = "";
                        object v = e.Value;
                        if (v is string)
                            text = BitConverter.ToString(Encoding.UTF8.GetBytes((string)v)).Replace("-", "");
                        Console.WriteLine("{0}\t{1}\t{2}\t{3}",
                            BitConverter.ToString(Encoding.UTF8.GetBytes((string)e.Key)).Replace("-", ""),
                            TypeName(type), data.Length, text);
                    }
                }
            } catch (Exception ex) {
                Console.WriteLine("! " + ex.GetType().Name);
            }
        }
        return 0;
    }
}
EOF
mcs -nologo -out:"$tmp/rr.exe" "$tmp/rr.cs" >"$tmp/mcs.log" 2>&1 || {
    echo "resources-diff.sh: mcs failed:" >&2
    cat "$tmp/mcs.log" >&2
    exit 99
}

exec python3 - "$prog" "$top" "$tmp" <<'PY'
import filecmp, glob, json, os, subprocess, sys
prog, top, tmp = sys.argv[1:4]
from mdtcheck import check, done

cap = int(os.environ.get("MDT_RESOURCES_MAX_FILES", "0") or 0)
def files_of(folder):
    fs = sorted(glob.glob(os.path.join(folder, "*.dll")))
    return fs[:cap] if cap else fs

inputs = [("the fixture", [os.path.join(top, "data/resources/Res.dll")])]
mono = os.environ.get("MDT_MONO_45", "/usr/lib/mono/4.5")
if os.path.isfile(os.path.join(mono, "mscorlib.dll")):
    inputs.append(("Mono 4.5", files_of(mono)))
else:
    print("skip: Mono's 4.5 class libraries are not installed (%s)" % mono)
def version_key(p):
    return [int(x) if x.isdigit() else x for x in os.path.basename(p.rstrip("/")).replace("-", ".").split(".")]
fw = []
for root in filter(None, [os.environ.get("MDT_DOTNET_ROOT"), os.environ.get("DOTNET_ROOT"),
                          "/usr/share/dotnet", "/usr/lib/dotnet"]):
    fw += glob.glob(os.path.join(root, "shared/Microsoft.NETCore.App/*/"))
if fw:
    newest = sorted(set(fw), key=version_key)[-1]
    inputs.append((".NET " + os.path.basename(newest.rstrip("/")), files_of(newest)))
else:
    print("skip: no .NET shared framework installed")

def listing(path):
    r = subprocess.run([prog, "--json", "-c", "resources", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    return r.returncode, [json.loads(l) for l in r.stdout.splitlines() if l.strip()], r.stderr

def entries(path, name):
    r = subprocess.run([prog, "--json", "-c", "resources '%s'" % name.replace("'", ""), path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    if r.returncode:
        return None, r.stderr
    d = json.loads(r.stdout.splitlines()[0])
    rs = d.get("resource_set")
    if not isinstance(rs, dict) or "entries" not in rs:
        return None, json.dumps(rs)
    return rs, ""

sets = []  # (assembly, name, extracted path, our entries)
for label, files in inputs:
    nfiles = nres = 0
    bad = []
    for f in files:
        rc, recs, err = listing(f)
        if rc == 1 and "not a .NET" in err:
            continue  # a native library of the framework
        if rc:
            bad.append("%s: resources exited %d: %s" % (f, rc, err.strip()))
            continue
        emb = {d["name"]: d["size"] for d in recs if d.get("where") == "embedded"}
        nfiles += 1
        if not emb:
            continue
        base = os.path.join(tmp, "%d" % len(sets)) + "-" + os.path.basename(f)
        ours, theirs = base + ".ours", base + ".monodis"
        os.makedirs(ours)
        os.makedirs(theirs)
        r = subprocess.run([prog, "-c", "resources -x -a '%s'" % ours, f], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=120)
        if r.returncode:
            bad.append("%s: resources -x -a exited %d: %s" % (f, r.returncode, r.stderr.strip()))
            continue
        subprocess.run(["monodis", "--mresources", f], cwd=theirs, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL, timeout=300)
        # monodis also writes each linked resource, as if it were embedded
        # at offset 0 (the bytes of the first embedded one): left out.
        a = sorted(os.listdir(ours))
        b = sorted(n for n in os.listdir(theirs) if n in emb or n not in
                   {d["name"] for d in recs})
        if a != b or sorted(emb) != a:
            bad.append("%s: files written %s, monodis %s, listed %s" % (f, a, b, sorted(emb)))
            continue
        for n in a:
            nres += 1
            p = os.path.join(ours, n)
            if not filecmp.cmp(p, os.path.join(theirs, n), shallow=False):
                bad.append("%s: %s differs from monodis's" % (f, n))
            elif os.path.getsize(p) != emb[n]:
                bad.append("%s: %s is %d bytes, listed as %d" % (f, n, os.path.getsize(p), emb[n]))
            with open(p, "rb") as fh:
                if fh.read(4) == b"\xce\xca\xef\xbe":
                    sets.append((f, n, p))
    check(not bad and nres > 0,
          "%s: resources -x -a writes what monodis --mresources writes (%d assemblies, %d "
          "embedded resources)" % (label, nfiles, nres), "\n".join(bad))

# 2. Resource sets against ResourceReader, in batches of files.
theirs = {}
for i in range(0, len(sets), 200):
    chunk = [p for _, _, p in sets[i:i + 200]]
    r = subprocess.run(["mono", os.path.join(tmp, "rr.exe")] + chunk, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=600)
    cur = None
    for line in r.stdout.decode("utf-8", "replace").splitlines():
        if line.startswith("# "):
            cur = line[2:]
            theirs[cur] = []
        elif cur is not None:
            theirs[cur].append(line)
bad = []
nent = nv1 = 0
for f, n, p in sets:
    rs, err = entries(f, n)
    if rs is None:
        if theirs.get(p, [""])[0].startswith("!"):
            continue  # both refuse it
        bad.append("%s: %s: %s" % (f, n, err.strip()))
        continue
    # Version 1 sets name each value's type by an index into the type
    # table; Mono's GetResourceData reads that index as a version 2 type
    # code (index 1 becomes "String"), so for them types are not compared.
    v1 = rs["version"] == 1
    lines = []
    for e in rs["entries"]:
        text = e["value"].encode("utf-8").hex().upper() if e["value"] is not None else ""
        lines.append("%s\t%s\t%d\t%s" % (e["name"].encode("utf-8").hex().upper(),
                                         "" if v1 else e["type"], e["size"], text))
    if v1:
        nv1 += 1
        t = []
        for x in theirs.get(p) or []:
            c = x.split("\t")
            if len(c) == 4:
                c[1] = ""
            t.append("\t".join(c))
        theirs[p] = t
    nent += len(lines)
    if lines != theirs.get(p):
        t = theirs.get(p) or []
        diff = [x for x in zip(lines, t) if x[0] != x[1]][:3]
        bad.append("%s: %s: %d entries here, %d in ResourceReader; first differences: %s"
                   % (f, n, len(lines), len(t), diff))
check(not bad and len(sets) > 0,
      "resource sets list the entries ResourceReader lists, with their types, sizes and "
      "strings (%d sets, %d of them version 1, %d entries)" % (len(sets), nv1, nent),
      "\n".join(bad))
done()
PY

#!/bin/sh
# mdinspect batch and the shell name every token alike: for every row of
# every table that names something (types, members, and the rows named by
# assembly identity or file name), in the fixtures below, `batch --json`
# on `PATH TOKEN` lines and the shell's `token` in JSON give the same
# "name", and the same "metadata_name" (doc/names.md) or none in both.
# Fixtures: data/*.dll (generic types and methods, nested generics,
# MemberRefs on TypeSpecs, MethodSpecs, properties, events, ModuleRefs,
# Files), data/pdb (nested generic classes), data/resolve/chain and
# data/resolve/nest (ExportedType rows: forwarders, nested forwarders);
# and, when the Mono framework is installed, its System.Core.dll (a
# real assembly full of generics).
# Prints one line per module and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-metadata-names.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-metadata-names.sh: python3 is needed" >&2; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-metanames.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
cd "$top" || exit 99

files="data/Everything.dll data/MultiIL.dll data/MultiMain.dll data/Shell.dll data/Sigs.dll
data/pdb/Lines.dll data/resolve/chain/Hop0.dll data/resolve/nest/NestFwd.dll"
mono=/usr/lib/mono/4.5/System.Core.dll
if [ -f "$mono" ]; then
    files="$files $mono"
else
    echo "batch-metadata-names.sh: $mono is not installed: the fixtures only" >&2
fi

. "$top/tests/common/check.sh"
for f in $files; do
    [ -f "$f" ] || { check_fail "$f is missing"; continue; }
    n=$(basename "$f" .dll)
    # Every row of the naming tables, as a shell script and as batch lines.
    "$prog" --json -c tables "$f" >"$tmp/$n.tables" || { check_fail "$f: tables"; continue; }
    python3 - "$f" "$tmp/$n.tables" "$tmp/$n.script" "$tmp/$n.lines" <<'PY'
import json, sys
path, tables, script, lines = sys.argv[1:]
naming = {"Module": 0x00, "TypeRef": 0x01, "TypeDef": 0x02, "Field": 0x04, "MethodDef": 0x06,
          "MemberRef": 0x0a, "Event": 0x14, "Property": 0x17, "ModuleRef": 0x1a,
          "TypeSpec": 0x1b, "Assembly": 0x20, "AssemblyRef": 0x23, "File": 0x26,
          "ExportedType": 0x27, "MethodSpec": 0x2b}
with open(script, "w") as s, open(lines, "w") as l:
    for t in map(json.loads, open(tables)):
        if t["table"] in naming:
            for rid in range(1, t["rows"] + 1):
                tok = (naming[t["table"]] << 24) | rid
                s.write("token 0x%08x\n" % tok)
                l.write("%s 0x%08x\n" % (path, tok))
PY
    [ $? = 0 ] || { check_fail "$f: the token list"; continue; }
    "$prog" --json -f "$tmp/$n.script" "$f" >"$tmp/$n.shell" 2>"$tmp/$n.shell.err"
    "$prog" batch --json --no-progress <"$tmp/$n.lines" >"$tmp/$n.batch" 2>"$tmp/$n.batch.err"
    if (cd "$tmp" && python3 - "$f" "$n.shell" "$n.batch") <<'PY'
import json, sys
path, shell, batch = sys.argv[1:]
sh = [json.loads(l) for l in open(shell)]
ba = [json.loads(l) for l in open(batch)]
bad = []
if len(sh) != len(ba):
    bad.append("%d shell records, %d batch records" % (len(sh), len(ba)))
meta = differ = 0
for s, b in zip(sh, ba):
    tok = s["token"]
    if b.get("token") != tok:
        bad.append("%s: batch answered for %s" % (tok, b.get("token")))
        continue
    # A row the shell names has a name in batch too, and the same one.
    sname = s.get("name") if isinstance(s.get("name"), str) else None
    if b.get("status") != "ok" or b.get("name") != sname:
        bad.append("%s: name %r (shell) against %r, status %s (batch)"
                   % (tok, sname, b.get("name"), b.get("status")))
    if ("metadata_name" in s) != ("metadata_name" in b) or s.get("metadata_name") != b.get("metadata_name"):
        bad.append("%s: metadata_name %r (shell) against %r (batch)"
                   % (tok, s.get("metadata_name", "<none>"), b.get("metadata_name", "<none>")))
    if "metadata_name" in b:
        meta += 1
        differ += b["metadata_name"] != b["name"]
for x in bad[:10]:
    print("    | " + x)
open(path.replace("/", "_") + ".differ", "w").write("%d\n" % differ)
print("%s %s: %d tokens, %d with metadata_name, %d of them differ from the name"
      % ("FAIL" if bad else "PASS", path, len(sh), meta, differ))
sys.exit(1 if bad else 0)
PY
    then check_count pass; else check_count fail; fi
done
# The fixtures hold names that differ (Pair`2, MemberRefs of TypeSpecs,
# nested generics...): a run where none does compared nothing of interest.
differ=$(cat "$tmp"/*.differ 2>/dev/null | awk '{ s += $1 } END { print s + 0 }')
if [ "$differ" -ge 100 ]; then
    check_pass "$differ metadata names differ from their names"
else
    check_fail "only $differ metadata names differ from their names"
fi
check_done

#!/bin/sh
# mdinspect(1) against the program, so the manual cannot drift:
#  1. the COMMANDS section of doc/mdinspect.1 (between the GENERATED
#     markers) is exactly what `mdinspect --man-commands` renders from the
#     command table, the same table `help` prints;
#  2. every command has a subsection under JSON OUTPUT;
#  3. every JSON field name that a golden transcript shows
#     (tests/cli/cases/*.out; column names of `dump`, which start with an
#     upper-case letter, aside) is named under JSON OUTPUT;
#  4. every long option --help lists is under OPTIONS.
# Usage: tests/cli/man-check.sh [--update]   (--update rewrites part 1)
# A part of doc/man-check.sh, the one check of the manual pages: prints
# one line per check, no closing line.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
man=$top/doc/mdinspect.1

if [ ! -x "$prog" ]; then
    echo "man-check.sh: $prog is not built" >&2
    exit 99
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "man-check.sh: python3 is needed" >&2
    exit 99
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-man.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

"$prog" --man-commands >"$tmp/commands.roff" || exit 99
LC_ALL=C "$prog" --help >"$tmp/help.txt" || exit 99
LC_ALL=C "$prog" -j -c help >"$tmp/help.json" || exit 99

exec python3 - "$man" "$tmp/commands.roff" "$tmp/help.txt" "$tmp/help.json" \
    "$top/tests/cli/cases" "${1:-}" <<'EOF'
import json, os, re, sys

man_path, roff_path, help_path, help_json, cases, mode = sys.argv[1:7]
BEGIN = '.\\" BEGIN GENERATED COMMANDS'
END = '.\\" END GENERATED COMMANDS'
man = open(man_path).read()
generated = open(roff_path).read()
from mdtcheck import check as result
import mdtcheck

b = man.find(BEGIN)
e = man.find(END)
if b < 0 or e < b:
    result(False, "the man page has the GENERATED COMMANDS markers")
    mdtcheck.part()
b = man.index("\n", b) + 1
current = man[b:e]
if mode == "--update":
    if current != generated:
        open(man_path, "w").write(man[:b] + generated + man[e:])
        print("updated the COMMANDS section of " + man_path)
    current = generated
    man = man[:b] + generated + man[e:]
if current == generated:
    result(True, "COMMANDS section is what the command table renders")
else:
    import difflib
    diff = "".join(difflib.unified_diff(current.splitlines(True), generated.splitlines(True),
                                        "doc/mdinspect.1", "mdinspect --man-commands"))
    result(False, "COMMANDS section is what the command table renders "
           "(run tests/cli/man-check.sh --update)", diff)

def section(text, title):
    m = re.search(r"^\.SH " + re.escape(title) + r"\s*$", text, re.M)
    if not m:
        return ""
    n = re.search(r"^\.SH ", text[m.end():], re.M)
    return text[m.end():m.end() + n.start()] if n else text[m.end():]

json_sec = section(man, "JSON OUTPUT")
commands = [json.loads(l)["command"] for l in open(help_json) if l.strip()]
missing = [c for c in commands if not re.search(r"^\.SS " + re.escape(c) + r"\s*$", json_sec, re.M)]
result(not missing, "every command (%d) has a JSON OUTPUT subsection" % len(commands),
       "missing: " + ", ".join(missing))

# Words named in the JSON section: roff font escapes and quotes removed.
plain = re.sub(r"\\f[BIRP]|\\\(dq|\\&|\\-", lambda m: "-" if m.group(0) == "\\-" else " ", json_sec)
words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", plain))
# dotted keys (`unknown.unmapped` of a profiler log's #stats line)
words |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)+", plain))

keys = {}
def collect(v, where):
    if isinstance(v, dict):
        for k, x in v.items():
            if not k[:1].isupper():
                keys.setdefault(k, where)
            collect(x, where)
    elif isinstance(v, list):
        for x in v:
            collect(x, where)

for name in sorted(os.listdir(cases)):
    if not name.endswith(".out"):
        continue
    for line in open(os.path.join(cases, name), encoding="utf-8", errors="replace"):
        line = line.strip()
        if line.startswith("{"):
            try:
                collect(json.loads(line), name)
            except ValueError:
                pass
undocumented = sorted(k for k in keys if k not in words)
result(bool(keys) and not undocumented,
       "every JSON field in the transcripts (%d) is documented" % len(keys),
       "\n".join("%s (seen in %s)" % (k, keys[k]) for k in undocumented))

opts_sec = section(man, "OPTIONS").replace("\\-", "-")
# The program's options only: the command list after them has options of
# commands (`typerefs --all`), documented under COMMANDS.
prog_help = re.split(r"\ncommands\b", open(help_path).read())[0]
opts = sorted(set(re.findall(r"--[a-z][a-z-]*", prog_help)))
missing = [o for o in opts if o not in opts_sec]
result(bool(opts) and not missing, "every option of --help (%d) is under OPTIONS" % len(opts),
       "missing: " + ", ".join(missing))

mdtcheck.part()
EOF

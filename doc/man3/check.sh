#!/bin/sh
# The library's manual pages (doc/man3/*.3) against the public headers, so
# the manual cannot drift from the API:
#  1. every function the installed headers declare (libmdtools/include/
#     mdtools/*.h, names starting with mdt_) is in the SYNOPSIS of exactly
#     one page, with the header's prototype (whitespace aside), after an
#     #include line that names the header declaring it;
#  2. every prototype a SYNOPSIS shows is a function of the headers (no
#     page documents a function that is gone);
#  3. each page names in NAME, and describes in DESCRIPTION, every function
#     of its SYNOPSIS (NAME is what the installed per-function links and
#     apropos(1) read);
#  4. each page has the sections NAME, SYNOPSIS, DESCRIPTION, SEE ALSO, and
#     those of a page with functions that fail, RETURN VALUE and ERRORS;
#  5. each page lints clean: no output from `groff -man -ww -z`, nor from
#     `man --warnings -E UTF-8 -l` where man-db is installed;
#  6. doc/local.mk installs exactly the pages there are, and libmdtools(3)
#     refers to every other page under SEE ALSO;
#  7. every structure a page shows (struct NAME { ... }) has the members of
#     the header's, in its order.
# Pages are read as groff renders them (plain text), so what is checked is
# what a reader sees.
# Usage: doc/man3/check.sh   Prints one line per check and finally
# "N passed, M failed".
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}

if ! command -v groff >/dev/null 2>&1; then
    echo "check.sh: groff is needed (Debian: groff-base)" >&2
    exit 77
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "check.sh: python3 is needed" >&2
    exit 99
fi
man_db=
if command -v man >/dev/null 2>&1 && man --help 2>&1 | grep -q -- --warnings; then
    man_db=man
fi

exec python3 - "$top" "$man_db" <<'EOF'
import glob, os, re, subprocess, sys

top, man_db = sys.argv[1], sys.argv[2]
incdir = os.path.join(top, "libmdtools", "include", "mdtools")
pagedir = os.path.join(top, "doc", "man3")
passed = failed = 0


def result(ok, name, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print("PASS " + name)
    else:
        failed += 1
        print("FAIL " + name)
        for line in detail.rstrip("\n").split("\n"):
            if line:
                print("    | " + line)


def norm(s):
    """A prototype as a string that ignores layout: one space between words,
    none next to punctuation."""
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r" ?([(),*\[\];]) ?", r"\1", s)
    return s


def fname(proto):
    m = re.search(r"\b(mdt_\w+)\s*\(", proto)
    return m.group(1) if m else None


# --- the headers: every function declaration at file scope ------------------
declared = {}  # name -> (header, normalised prototype)
for path in sorted(glob.glob(os.path.join(incdir, "*.h"))):
    header = os.path.basename(path)
    src = open(path, encoding="utf-8").read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r"^[ \t]*#[^\n]*(\\\n[^\n]*)*", " ", src, flags=re.M)
    src = re.sub(r'extern\s+"C"\s*\{', " ", src)
    # Statements at file scope; a function body or a struct ends one too.
    depth, start, stmts = 0, 0, []
    for i, c in enumerate(src):
        if c == "{":
            if depth == 0:
                stmts.append((src[start:i], "{"))
            depth += 1
        elif c == "}":
            depth = max(depth - 1, 0)
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            stmts.append((src[start:i], ";"))
            start = i + 1
    for text, end in stmts:
        text = text.strip()
        if re.match(r"(typedef|enum|struct|union)\b", text) or "(*" in text:
            continue
        name = fname(text)
        if not name or not re.search(r"\)\s*$", text):
            continue
        declared[name] = (header, norm(text + ";"))

# --- the pages, as groff renders them -----------------------------------------
def render(path):
    out = subprocess.run(["groff", "-man", "-Tascii", "-P-cbu", "-rLL=200n", path],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         check=False).stdout.decode("ascii", "replace")
    sections, cur = {}, None
    for line in out.split("\n"):
        if re.match(r"^[A-Z][A-Z ]*[A-Z]$", line):
            cur = line
            sections[cur] = []
        elif cur is not None:
            sections[cur].append(line)
    return {k: "\n".join(v) for k, v in sections.items()}


pages = sorted(glob.glob(os.path.join(pagedir, "*.3")))
result(bool(pages), "there are pages in doc/man3 (%d)" % len(pages))
documented = {}  # name -> [(page, header of the #include before it, prototype)]
page_secs = {}
for path in pages:
    page = os.path.basename(path)
    secs = render(path)
    page_secs[page] = secs
    syn = secs.get("SYNOPSIS", "")
    include = None
    for part in re.split(r"(#include\s*<mdtools/[\w.]+>)", syn):
        m = re.match(r"#include\s*<mdtools/([\w.]+)>", part)
        if m:
            include = m.group(1)
            continue
        for stmt in part.split(";"):
            name = fname(stmt)
            if not name or "(*" in stmt or re.match(r"\s*typedef\b", stmt):
                continue
            documented.setdefault(name, []).append((page, include, norm(stmt.strip() + ";")))

# 1. every declared function, once, with its prototype and header
for name in sorted(declared):
    header, proto = declared[name]
    docs = documented.get(name, [])
    problems = []
    if not docs:
        problems.append("in no page's SYNOPSIS")
    elif len(docs) > 1:
        problems.append("in the SYNOPSIS of %s" % ", ".join(d[0] for d in docs))
    for page, include, shown in docs:
        if shown != proto:
            problems.append("%s shows  %s\nthe header has  %s" % (page, shown, proto))
        if include != header:
            problems.append("%s shows it under #include <mdtools/%s>, it is declared in %s"
                            % (page, include, header))
    result(not problems, "%s (%s) is documented with its prototype" % (name, header),
           "\n".join(problems))

# 2. nothing documented that the headers do not declare
stale = sorted(n for n in documented if n not in declared)
result(not stale, "every SYNOPSIS prototype is a function of the headers",
       "\n".join("%s in %s" % (n, documented[n][0][0]) for n in stale))

# 3, 4. each page: NAME and DESCRIPTION cover its functions; its sections
for page in sorted(page_secs):
    secs = page_secs[page]
    funcs = sorted(n for n, ds in documented.items() if any(d[0] == page for d in ds))
    name_sec = secs.get("NAME", "")
    names = set(re.findall(r"\b(mdt_\w+)\b", name_sec))
    desc = secs.get("DESCRIPTION", "")
    missing = [f for f in funcs if f not in names]
    undescribed = [f for f in funcs if not re.search(r"\b%s\b" % re.escape(f), desc)]
    result(not missing and not undescribed,
           "%s names and describes its %d functions" % (page, len(funcs)),
           ("not in NAME: " + ", ".join(missing) + "\n" if missing else "") +
           ("not in DESCRIPTION: " + ", ".join(undescribed) if undescribed else ""))
    want = ["NAME", "SYNOPSIS", "DESCRIPTION", "SEE ALSO"]
    if any(declared[f][1].startswith("int") for f in funcs if f in declared):
        want += ["RETURN VALUE", "ERRORS"]
    absent = [w for w in want if w not in secs]
    result(not absent, "%s has the sections %s" % (page, ", ".join(want)),
           "missing: " + ", ".join(absent))

# 5. lint
for path in pages:
    page = os.path.basename(path)
    p = subprocess.run(["groff", "-man", "-ww", "-z", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, check=False)
    msgs = p.stdout.decode("utf-8", "replace")
    if man_db:
        env = dict(os.environ, MANROFFSEQ="", MANWIDTH="80", LC_ALL="C.UTF-8")
        q = subprocess.run([man_db, "--warnings", "-E", "UTF-8", "-l", path],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env,
                           check=False)
        msgs += q.stderr.decode("utf-8", "replace")
    result(p.returncode == 0 and not msgs.strip(),
           "%s lints clean (groff -ww%s)" % (page, ", man --warnings" if man_db else ""), msgs)

# 7. structures a page shows are the headers' (members and their order)
structs = {}
for path in sorted(glob.glob(os.path.join(incdir, "*.h"))):
    src = open(path, encoding="utf-8").read()
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", src):
        structs[m.group(1)] = norm(m.group(2))
for page in sorted(page_secs):
    text = "\n".join(page_secs[page].values())
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    for m in re.finditer(r"\bstruct\s+(\w+)\s*\{([^{}]*)\}", text):
        name, body = m.group(1), norm(m.group(2))
        result(structs.get(name) == body, "%s shows struct %s as the header has it" % (page, name),
               "page:   %s\nheader: %s" % (body, structs.get(name, "(no such struct)")))

# 6. installed pages and the overview's SEE ALSO
mk = open(os.path.join(top, "doc", "local.mk"), encoding="utf-8").read()
listed = set(re.findall(r"doc/man3/([\w.]+\.3)\b", mk))
onfs = set(os.path.basename(p) for p in pages)
result(listed == onfs, "doc/local.mk installs every page and no other",
       "not installed: %s\nnot there: %s" % (", ".join(sorted(onfs - listed)),
                                             ", ".join(sorted(listed - onfs))))
see = page_secs.get("libmdtools.3", {}).get("SEE ALSO", "")
refs = set(re.findall(r"\b([\w.]+)\(3\)", see))
others = set(p[:-2] for p in onfs) - {"libmdtools"}
result(others <= refs, "libmdtools(3) refers to every page under SEE ALSO",
       "missing: " + ", ".join(sorted(others - refs)))

print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
EOF

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
#     the header's, in its order;
#  8. every installed header is #included in the SYNOPSIS of some page;
#  9. every macro of the headers (but include guards, the X-macro
#     parameters a header #undefs, and names ending in _) and every
#     enumerator is named in some page, an enumerator also by its enum's
#     family written as PREFIX_* (MDT_ELEMENT_TYPE_*), PREFIX being what
#     all the enum's constants begin with;
# 10. doc/man3/links.sh, which `make install` uses to make FUNCTION.3 a
#     link to its page, gives every documented function once, with the
#     page whose SYNOPSIS has it, and no name of a page;
# 12. every error code a header's comments give is in the ERRORS section
#     of the page that shows that header (a page may list more: the
#     headers do not yet list every error each function returns).
# 13. every old name a header keeps (MDT_DEPRECATED_FOR(new) before its
#     prototype) is under DEPRECATED in the page whose SYNOPSIS has the
#     new name, saying which new name it is; links.sh links the old name
#     to that page; no page shows an old name in its SYNOPSIS.
# 11. no page hyphenates a word groff did not hyphenate in the source (an
#     identifier split across lines): it renders the same with hyphenation
#     forced off.
# Pages are read as groff renders them (plain text), so what is checked is
# what a reader sees.
# Usage: doc/man3/check.sh   A part of doc/man-check.sh, the one check of
# the manual pages: prints one line per check, no closing line.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"

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
from mdtcheck import check as result
import mdtcheck


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
deprecated = {}  # old name -> (header, new name)
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
        old = re.match(r"MDT_DEPRECATED_FOR\((\w+)\)\s*", text)
        if old:
            text = text[old.end():]
        name = fname(text)
        if not name or not re.search(r"\)\s*$", text):
            continue
        if old:
            deprecated[name] = (header, old.group(1))
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
        home = sorted(set(d[0] for ds in documented.values() for d in ds if d[1] == header))
        problems.append("in no page's SYNOPSIS (%s)" % (
            "add it to %s, which shows <mdtools/%s>" % (" or ".join(home), header) if home
            else "no page shows <mdtools/%s> yet" % header))
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

# 8. every header has a page
headers = sorted(os.path.basename(p) for p in glob.glob(os.path.join(incdir, "*.h")))
included = set()
for secs in page_secs.values():
    included |= set(re.findall(r"#include\s*<mdtools/([\w.]+)>", secs.get("SYNOPSIS", "")))
for header in headers:
    result(header in included, "<mdtools/%s> is in the SYNOPSIS of a page" % header,
           "no page shows #include <mdtools/%s>" % header)

# 9. macros and enumerators are named somewhere
alltext = ""
for secs in page_secs.values():
    alltext += "\n".join(secs.values()) + "\n"
alltext = re.sub(r"-\n\s*", "-", alltext)
for path in sorted(glob.glob(os.path.join(incdir, "*.h"))):
    header = os.path.basename(path)
    src = open(path, encoding="utf-8").read()
    nocomment = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    undefined = set(re.findall(r"^\s*#\s*undef\s+(\w+)", nocomment, flags=re.M))
    missing = []
    for name in re.findall(r"^\s*#\s*define\s+(MDT_\w+)", nocomment, flags=re.M):
        if name in undefined or name.endswith("_") or name.startswith("MDTOOLS_"):
            continue
        if not re.search(r"\b%s\b" % name, alltext):
            missing.append(name)
    for m in re.finditer(r"\benum\s*\w*\s*\{([^}]*)\}", nocomment):
        body = re.sub(r"^\s*#[^\n]*", " ", m.group(1), flags=re.M)
        consts = re.findall(r"\b(MDT_\w+)\s*(?:=[^,]*)?(?:,|$)", body.strip())
        if not consts:
            continue
        prefix = os.path.commonprefix(consts)
        prefix = prefix[:prefix.rfind("_") + 1]
        family = len(consts) > 1 and re.search(r"\b%s\*" % re.escape(prefix), alltext)
        for c in consts:
            if not family and not re.search(r"\b%s\b" % c, alltext):
                missing.append(c)
    result(not missing, "the macros and constants of <mdtools/%s> are named in the pages" % header,
           "named in no page: " + ", ".join(sorted(set(missing))))

# 10. the install-time links
p = subprocess.run(["sh", os.path.join(pagedir, "links.sh")] + pages, stdout=subprocess.PIPE,
                   stderr=subprocess.STDOUT, check=False)
pairs = [l.split() for l in p.stdout.decode("utf-8", "replace").splitlines() if l.strip()]
linked = {}
for pair in pairs:
    if len(pair) == 2:
        linked.setdefault(pair[0], []).append(pair[1])
problems = []
if p.returncode != 0 or any(len(x) != 2 for x in pairs):
    problems.append("links.sh failed or printed something else:\n" + p.stdout.decode())
for name in sorted(documented):
    where = linked.get(name, [])
    page = documented[name][0][0][:-2]
    if where != [page]:
        problems.append("%s links to %s, its SYNOPSIS is in %s.3"
                        % (name, ", ".join(w + ".3" for w in where) or "nothing", page))
for name in sorted(set(linked) - set(documented) - set(deprecated)):
    problems.append("%s.3 would be installed, but no SYNOPSIS declares %s" % (name, name))
for name in sorted(set(linked) & set(p[:-2] for p in onfs)):
    problems.append("%s.3 would overwrite the page of that name" % name)
result(not problems, "links.sh gives each function's page (%d links)" % len(pairs),
       "\n".join(problems))

# 11. no automatic hyphenation
for path in pages:
    page = os.path.basename(path)
    outs = []
    for extra in ([], ["-rHY=0"]):
        outs.append(subprocess.run(["groff", "-man", "-Tutf8", "-P-cbu", "-rLL=78n"] + extra + [path],
                                   stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   check=False).stdout)
    diff = ""
    if outs[0] != outs[1]:
        a = outs[0].decode("utf-8", "replace").splitlines()
        diff = "\n".join(l for l in a if re.search(r"\w\u2010$|\w-$", l))[:600]
    result(not diff and outs[0] == outs[1], "%s keeps words whole (no hyphenation)" % page,
           "hyphenated at 78 columns (the page lacks .nr HY 0?):\n" + diff)

# 12. the errors the headers give are in the pages
for header in headers:
    src = open(os.path.join(incdir, header), encoding="utf-8").read()
    said = set(re.findall(r"\bMDT_E[A-Z]+\b", " ".join(re.findall(r"/\*.*?\*/", src, flags=re.S))))
    shown = sorted(pg for pg, secs in page_secs.items()
                   if re.search(r"#include\s*<mdtools/%s>" % re.escape(header),
                                secs.get("SYNOPSIS", "")))
    if not said or not shown:
        continue
    listed = set()
    for pg in shown:
        listed |= set(re.findall(r"\bMDT_E[A-Z]+\b", page_secs[pg].get("ERRORS", "")))
    result(said <= listed, "the errors <mdtools/%s> gives are in the ERRORS of %s"
           % (header, ", ".join(shown)),
           "in the header's comments, not under ERRORS: " + ", ".join(sorted(said - listed)))

# 13. the old names
for name in sorted(deprecated):
    header, new = deprecated[name]
    problems = []
    if new not in declared:
        problems.append("%s says use %s, which <mdtools/%s> does not declare" % (name, new, header))
    home = documented.get(new, [("?", None, None)])[0][0]
    dep = page_secs.get(home, {}).get("DEPRECATED", "")
    if not re.search(r"\b%s\(\)\s+(?:\S+\s+){0,6}?%s\(\)" % (name, new), dep):
        problems.append("%s's DEPRECATED section does not give %s() with its new name %s()"
                        % (home, name, new))
    if name in documented:
        problems.append("shown in the SYNOPSIS of %s" % documented[name][0][0])
    if linked.get(name, []) != [home[:-2]]:
        problems.append("links.sh links %s to %s, not %s" % (name, linked.get(name), home))
    result(not problems, "the old name %s is documented as deprecated for %s" % (name, new),
           "\n".join(problems))

mdtcheck.part()
EOF

#!/usr/bin/env python3
"""Structure-aware damage of real assemblies, and every mdinspect command on
each result (issue 25).

A case is a seed. The seed picks a real file (the .NET shared framework,
Mono's 4.5 assemblies) and damages its metadata in ways that reach deep
code: random bytes in the metadata window or in one region of it, rows of a
table swapped, a heap made shorter than what refers to it, coded and table
indexes stretched past their targets or turned into cycles, row counts
changed, signature blobs cut short or given hostile element types, #Strings
entries without their terminator. Then every mdinspect command that reads a
file runs on the result in one process (the listings, `dump` of every
table, every heap, `validate`, `token`, `sig`, `inst`, `attrs`, `resolve`
on tokens of every table, `type NAME` on its types, in a style chosen by
the seed, with an intact module of the same framework open beside it so
that resolution goes somewhere), and `mdinspect batch` on `PATH TOKEN`
lines naming tokens of every table, in text and JSON.

A case fails when a process dies of a signal, prints a sanitizer report,
runs past its timeout, or exits with a status mdinspect(1) does not
document (0, 1 and 2, for the shell and batch alike). The failing command
is found by running the commands one at a time, and the case is printed
with what reproduces it:

    tests/damage/damage.py --file PATH --seed N [--mutation SPEC]

Cases run from --seed on, for --seconds (or $MDT_DAMAGE_SECONDS) or
--cases; the same seeds give the same damage of the same files. --files
runs the commands on the given files as they are (no damage: the corrupt
cases of tests/corrupt), --recipes replays tests/damage/recipes.tsv.

Python 3 standard library only; the PE and metadata parser is
tests/corrupt/make-cases.py's.
"""

import argparse
import glob
import hashlib
import importlib.util
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "common"))
import mdtcheck  # noqa: E402  tests/common: the PASS/FAIL lines and the closing line

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))


def load_make_cases():
    spec = importlib.util.spec_from_file_location(
        "make_cases", os.path.join(TOP, "tests", "corrupt", "make-cases.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


mc = load_make_cases()

# ---------------------------------------------------------------------------
# Inputs


def newest_version_dir(parent):
    def key(v):
        return [int(x) if x.isdigit() else -1 for x in re.split(r"[.-]", v)]
    try:
        vs = [v for v in os.listdir(parent) if os.path.isdir(os.path.join(parent, v))]
    except OSError:
        return None
    return os.path.join(parent, max(vs, key=key)) if vs else None


def dotnet_framework():
    """The newest shared/Microsoft.NETCore.App/VERSION of the dotnet root
    ($MDT_DOTNET_ROOT, $DOTNET_ROOT, or the dotnet on PATH), or None."""
    root = os.environ.get("MDT_DOTNET_ROOT") or os.environ.get("DOTNET_ROOT")
    if not root:
        exe = shutil.which("dotnet")
        if exe:
            root = os.path.dirname(os.path.realpath(exe))
    if not root:
        return None
    return newest_version_dir(os.path.join(root, "shared", "Microsoft.NETCore.App"))


def default_dirs():
    """The real frameworks installed here: .NET's shared framework, Mono 4.5
    ($MDT_MONO_45 or /usr/lib/mono/4.5). $MDT_DAMAGE_DIRS (colon-separated)
    replaces both."""
    env = os.environ.get("MDT_DAMAGE_DIRS")
    if env:
        return [d for d in env.split(":") if d]
    dirs = []
    fw = dotnet_framework()
    if fw:
        dirs.append(fw)
    mono = os.environ.get("MDT_MONO_45", "/usr/lib/mono/4.5")
    if os.path.isdir(mono):
        dirs.append(mono)
    return dirs


def list_inputs(dirs, max_size):
    """Every .dll and .exe regular file of dirs (links followed, each file
    once), sorted, at most max_size bytes."""
    seen, out = set(), []
    for d in dirs:
        for p in sorted(glob.glob(os.path.join(d, "*.dll")) + glob.glob(os.path.join(d, "*.exe"))):
            rp = os.path.realpath(p)
            try:
                st = os.stat(rp)
            except OSError:
                continue
            if rp in seen or not os.path.isfile(rp) or st.st_size > max_size or st.st_size < 256:
                continue
            seen.add(rp)
            out.append(p)
    return out


def sha1_12(data):
    return hashlib.sha1(data).hexdigest()[:12]


# ---------------------------------------------------------------------------
# Mutations. Each takes a random.Random and the parsed original (its offsets
# stay those of the intact file), changes pe.data, and says what it did.

SIG_COLUMNS = [("MethodDef", "Signature"), ("MemberRef", "Signature"), ("Field", "Signature"),
               ("Property", "Type"), ("StandAloneSig", "Signature"), ("TypeSpec", "Signature"),
               ("MethodSpec", "Instantiation"), ("CustomAttribute", "Value"),
               ("Constant", "Value"), ("FieldMarshal", "NativeType")]

# Element types and bytes that reach the decoder's deeper paths (II.23.1.16).
HOSTILE_SIG_BYTES = [0x00, 0x01, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x18, 0x1b,
                     0x1d, 0x1e, 0x1f, 0x20, 0x41, 0x45, 0x7f, 0x80, 0xbf, 0xc0, 0xdf, 0xe0, 0xff]


def present_tables(pe):
    return [t for t in sorted(pe.md.tables) if pe.md.tables[t].rows > 0]


def cells(pe, kinds):
    """(table, column index, kind, arg) of every column of a present table
    whose kind is in kinds."""
    out = []
    for t in present_tables(pe):
        tb = pe.md.tables[t]
        for i, (cname, kind, arg) in enumerate(tb.schema):
            if kind in kinds:
                out.append((tb, i, kind, arg))
    return out


def put_cell(pe, tb, rid, col, v):
    o = tb.off + (rid - 1) * tb.row_size + tb.col_off[col]
    w = tb.col_w[col]
    v &= (1 << (8 * w)) - 1
    if w == 1:
        pe.data[o] = v
    elif w == 2:
        mc.put16(pe.data, o, v)
    else:
        mc.put32(pe.data, o, v)


def get_cell(pe, tb, rid, col):
    o = tb.off + (rid - 1) * tb.row_size + tb.col_off[col]
    w = tb.col_w[col]
    d = pe.data
    return d[o] if w == 1 else mc.u16(d, o) if w == 2 else mc.u32(d, o)


def some_rows(r, tb):
    """One row, a few, or every row of a table."""
    k = r.choice([1, 1, 1, 3, 10, 0])
    if k == 0 or k >= tb.rows:
        return list(range(1, tb.rows + 1)), "every row"
    rows = sorted(r.sample(range(1, tb.rows + 1), k))
    return rows, "row%s %s" % ("s" if k > 1 else "", ",".join(map(str, rows)))


def m_bytes(r, pe, n=None):
    """n random bytes of the metadata window overwritten (positions drawn
    first, then values, one pair at a time)."""
    if n is None:
        n = r.choice([1, 2, 4, 16, 64, 300])
    for _ in range(n):
        pe.data[pe.md_off + r.randrange(pe.md_size)] = r.randrange(256)
    return "bytes:%d" % n


def regions(pe):
    md = pe.md
    out = [("root and stream headers", md.base, md.headers_end - md.base)]
    if md.ts is not None:
        out.append(("#~ header and row counts", md.ts_off, md.rows_end - md.ts_off))
        for t in present_tables(pe):
            tb = md.tables[t]
            out.append(("%s rows" % tb.name, tb.off, tb.rows * tb.row_size))
    for h in ("#Strings", "#US", "#Blob", "#GUID"):
        if h in md.heaps and md.heaps[h].size:
            out.append((h, md.heap_off(h), md.heaps[h].size))
    return [x for x in out if x[2] > 0 and x[1] + x[2] <= len(pe.data)]


def m_region(r, pe):
    name, off, size = r.choice(regions(pe))
    n = r.choice([1, 2, 4, 8, 32])
    for _ in range(n):
        pe.data[off + r.randrange(size)] = r.choice([0, 0xff, r.randrange(256)])
    return "region:%d bytes in %s" % (n, name)


def m_swap_rows(r, pe):
    ts = [t for t in present_tables(pe) if pe.md.tables[t].rows >= 2]
    if not ts:
        return m_bytes(r, pe)
    tb = pe.md.tables[r.choice(ts)]
    d = pe.data
    what = []
    for _ in range(r.choice([1, 1, 2, 8])):
        a, b = r.sample(range(1, tb.rows + 1), 2)
        oa, ob = tb.off + (a - 1) * tb.row_size, tb.off + (b - 1) * tb.row_size
        ra, rb = bytes(d[oa:oa + tb.row_size]), bytes(d[ob:ob + tb.row_size])
        d[oa:oa + tb.row_size], d[ob:ob + tb.row_size] = rb, ra
        what.append("%d<->%d" % (a, b))
    return "swap-rows:%s %s" % (tb.name, " ".join(what))


def m_shorten_heap(r, pe):
    hs = [h for h in ("#Strings", "#US", "#Blob", "#GUID") if h in pe.md.heaps]
    if not hs:
        return m_bytes(r, pe)
    h = r.choice(hs)
    s = pe.md.heaps[h]
    new = r.choice([0, 1, 2, s.size // 2, s.size * 3 // 4, max(s.size - 1, 0),
                    max(s.size - 16, 0), r.randrange(s.size + 1)])
    mc.put32(pe.data, s.hdr + 4, new)
    return "shorten-heap:%s 0x%x->0x%x" % (h, s.size, new)


def m_row_count(r, pe):
    ts = present_tables(pe)
    if not ts:
        return m_bytes(r, pe)
    tb = pe.md.tables[r.choice(ts)]
    new = r.choice([0, 1, tb.rows - 1, tb.rows + 1, tb.rows + 7, tb.rows * 2, 0xFFFF, 0x10000,
                    0xFFFFFF, 0x1000000, 0xFFFFFFFF])
    new &= 0xFFFFFFFF
    mc.put32(pe.data, tb.count_off, new)
    return "row-count:%s %d->%d" % (tb.name, tb.rows, new)


def m_stretch_coded(r, pe):
    cs = cells(pe, ("CODED",))
    if not cs:
        return m_bytes(r, pe)
    tb, col, _kind, ci = r.choice(cs)
    bits, tags = mc.CODED[ci]
    rows, which = some_rows(r, tb)
    mode = r.choice(["past", "past", "tag", "max", "self"])
    for rid in rows:
        tag = r.randrange(len(tags))
        target = tags[tag]
        n = pe.md.rows(target) if target != mc.NOTABLE else 0
        if mode == "past":
            row = n + r.choice([1, 1, 2, 100, 0x3FFF])
        elif mode == "tag":
            if len(tags) < (1 << bits):
                tag = r.randrange(len(tags), 1 << bits)  # a tag the index does not define
            row = r.randrange(1, n + 2)
        elif mode == "max":
            row = (1 << (8 * tb.col_w[col] - bits)) - 1
        else:
            # The row itself, or row 1, where the coded index can name this table:
            # cycles for the walks over scopes, nesting and forwarders.
            if tb.id in tags:
                tag, row = tags.index(tb.id), rid
            else:
                row = 1
        put_cell(pe, tb, rid, col, row << bits | tag)
    return "stretch-coded:%s.%s %s %s" % (tb.name, tb.schema[col][0], mode, which)


def m_stretch_index(r, pe):
    cs = cells(pe, ("TAB", "LIST"))
    if not cs:
        return m_bytes(r, pe)
    tb, col, kind, target = r.choice(cs)
    n = pe.md.rows(target)
    rows, which = some_rows(r, tb)
    mode = r.choice(["past", "past", "zero", "max", "backwards", "self"])
    for rid in rows:
        if mode == "past":
            v = n + r.choice([1, 2, 3, 1000])
        elif mode == "zero":
            v = 0
        elif mode == "max":
            v = 0xFFFFFFFF
        elif mode == "backwards":
            v = max(get_cell(pe, tb, rid, col) - r.choice([1, 2, 50]), 0)
        else:
            v = rid if target == tb.id else r.randrange(1, n + 2)
        put_cell(pe, tb, rid, col, v)
    return "stretch-index:%s.%s %s %s" % (tb.name, tb.schema[col][0], mode, which)


def m_heap_index(r, pe):
    cs = cells(pe, ("STR", "BLOB", "GUID"))
    if not cs:
        return m_bytes(r, pe)
    tb, col, kind, _ = r.choice(cs)
    heap = {"STR": "#Strings", "BLOB": "#Blob", "GUID": "#GUID"}[kind]
    size = pe.md.heaps[heap].size if heap in pe.md.heaps else 0
    rows, which = some_rows(r, tb)
    mode = r.choice(["past", "end", "inside", "max"])
    for rid in rows:
        if mode == "past":
            v = (size // 16 + 2) if kind == "GUID" else size + r.choice([0, 1, 7])
        elif mode == "end":
            v = max(size - 1, 0) if kind != "GUID" else size // 16
        elif mode == "inside":
            v = r.randrange(max(size, 1)) if kind != "GUID" else r.randrange(size // 16 + 1)
        else:
            v = 0xFFFFFFFF
        put_cell(pe, tb, rid, col, v)
    return "heap-index:%s.%s %s %s" % (tb.name, tb.schema[col][0], mode, which)


def blob_at(pe, idx):
    """(file offset of the data, length, prefix width) of #Blob entry idx,
    or None."""
    if "#Blob" not in pe.md.heaps:
        return None
    s = pe.md.heaps["#Blob"]
    if idx == 0 or idx >= s.size:
        return None
    o = pe.md.heap_off("#Blob") + idx
    try:
        n, w = mc.read_compressed(pe.data, o)
    except IndexError:
        return None
    if idx + w + n > s.size:
        return None
    return o + w, n, w


def m_break_sig(r, pe):
    cols = []
    for tname, cname in SIG_COLUMNS:
        t = mc.TABLE_ID[tname]
        if pe.md.rows(t):
            cols.append((pe.md.tables[t], pe.md.tables[t].col(cname)))
    if not cols:
        return m_bytes(r, pe)
    tb, col = r.choice(cols)
    what = []
    for _ in range(r.choice([1, 1, 4, 32])):
        rid = r.randrange(1, tb.rows + 1)
        b = blob_at(pe, get_cell(pe, tb, rid, col))
        if not b or b[1] == 0:
            continue
        o, n, w = b
        mode = r.choice(["cut", "byte", "hostile", "count", "self", "token"])
        if mode == "cut" and w == 1:
            pe.data[o - 1] = r.randrange(n)
        elif mode == "byte":
            pe.data[o + r.randrange(n)] = r.randrange(256)
        elif mode == "hostile":
            for _ in range(r.choice([1, 2, 3])):
                pe.data[o + r.randrange(n)] = r.choice(HOSTILE_SIG_BYTES)
        elif mode == "count" and n >= 2:
            # A huge compressed count where a count or a length stands.
            i = r.randrange(1, n)
            pe.data[o + i] = r.choice([0x7f, 0xbf, 0xdf])
        elif mode == "self" and tb.name == "TypeSpec" and n >= 3:
            # GENERICINST CLASS <this TypeSpec> 1 <this TypeSpec>: a spec
            # made of itself.
            tok = (rid << 2) | 2
            enc = bytes([tok]) if tok < 0x80 else bytes([0x80 | tok >> 8, tok & 0xff]) \
                if tok < 0x4000 else None
            if enc:
                pat = bytes([0x15, 0x12]) + enc + bytes([1, 0x12]) + enc
                pat = pat[:n]
                pe.data[o:o + len(pat)] = pat
        elif mode == "token" and n >= 2:
            # A class or value type token far past its table.
            i = r.randrange(n - 1)
            pe.data[o + i] = r.choice([0x11, 0x12])
            pe.data[o + i + 1] = r.choice([0x7d, 0x7e, 0x7f, 0xbf])
        else:
            continue
        what.append("%d:%s" % (rid, mode))
    return "break-sig:%s.%s %s" % (tb.name, tb.schema[col][0], " ".join(what) or "none")


def m_strings(r, pe):
    if "#Strings" not in pe.md.heaps or pe.md.heaps["#Strings"].size < 2:
        return m_bytes(r, pe)
    s = pe.md.heaps["#Strings"]
    base = pe.md.heap_off("#Strings")
    mode = r.choice(["unterminated", "utf8", "special", "arity"])
    n = r.choice([1, 4, 64])
    for _ in range(n):
        i = r.randrange(1, s.size)
        if mode == "unterminated":
            # Terminators become letters: names run into the next ones,
            # the last one to the heap's end.
            j = pe.data.find(b"\0", base + i, base + s.size)
            if j >= 0:
                pe.data[j] = 0x41
        elif mode == "utf8":
            pe.data[base + i] = r.choice([0x80, 0xc0, 0xe0, 0xed, 0xf0, 0xf8, 0xff])
        elif mode == "special":
            pe.data[base + i] = r.choice(b"+/\\,[]<>`&*.:!'\" ")
        else:
            pat = r.choice([b"`99999999999", b"`0", b"`-1", b"`4294967297", b"`"])
            pe.data[base + i:base + i + len(pat)] = pat[:max(0, s.size - i - 1)]
    return "strings:%s %d" % (mode, n)


def m_headers(r, pe):
    """A few bytes of the PE headers, the section table, the CLI header or
    the debug directory (what image/ reads before the metadata)."""
    regs = [("PE header", pe.lfanew, pe.sect_off - pe.lfanew),
            ("section table", pe.sect_off, 40 * len(pe.sections)),
            ("CLI header", pe.cli_off, 72)]
    rva, size = pe.dir(6)
    if rva and size:
        try:
            regs.append(("debug directory", pe.rva2off(rva), min(size, 28 * 4)))
        except ValueError:
            pass
    name, off, size = r.choice([x for x in regs if x[2] > 0 and x[1] + x[2] <= len(pe.data)])
    n = r.choice([1, 2, 4])
    for _ in range(n):
        pe.data[off + r.randrange(size)] = r.choice([0, 0xff, r.randrange(256)])
    return "headers:%d bytes in %s" % (n, name)


def m_pe_parts(r, pe):
    """A few bytes of what `pe` and `sn` read besides the metadata: the
    Win32 resource tree (its directories first), the data of a debug
    entry, the ReadyToRun header and its section list, the strong-name
    signature, or a data directory's RVA or size."""
    d = pe.data
    regs = []

    def add(name, rva, size):
        if not rva or not size:
            return
        try:
            off = pe.rva2off(rva)
        except ValueError:
            return
        regs.append((name, off, min(size, len(d) - off)))

    rva, size = pe.dir(2)
    add("Win32 resource directories", rva, min(size, 256))
    add("Win32 resources", rva, min(size, 4096))
    rva, size = pe.dir(6)
    if rva and size:
        try:
            off = pe.rva2off(rva)
            for i in range(min(size // 28, 8)):
                e = off + 28 * i
                if e + 28 <= len(d) and mc.u32(d, e + 16) and mc.u32(d, e + 24) < len(d):
                    regs.append(("debug entry %d's data" % i, mc.u32(d, e + 24),
                                 min(mc.u32(d, e + 16), len(d) - mc.u32(d, e + 24), 512)))
        except ValueError:
            pass
    add("ReadyToRun header", mc.u32(d, pe.cli_off + 64), mc.u32(d, pe.cli_off + 68))
    add("strong-name signature", mc.u32(d, pe.cli_off + 32), mc.u32(d, pe.cli_off + 36))
    regs = [x for x in regs if x[2] > 0]
    if not regs or r.random() < 0.15:
        i = r.choice([2, 4, 6, 14])
        off = pe.dir_off(i) + r.choice([0, 4])
        v = r.choice([0, 1, 0xFFFFFFFF, 0x7FFFFFFF, r.randrange(1 << 32)])
        struct.pack_into("<I", d, off, v)
        return "pe-parts:directory %d %s 0x%x" % (i, "size" if off % 8 else "rva", v)
    name, off, size = r.choice(regs)
    n = r.choice([1, 2, 4, 8])
    for _ in range(n):
        d[off + r.randrange(size)] = r.choice([0, 0xff, r.randrange(256)])
    return "pe-parts:%d bytes in %s" % (n, name)


MUTATIONS = {
    "bytes": (m_bytes, 3),
    "region": (m_region, 3),
    "swap-rows": (m_swap_rows, 2),
    "shorten-heap": (m_shorten_heap, 2),
    "row-count": (m_row_count, 2),
    "stretch-coded": (m_stretch_coded, 3),
    "stretch-index": (m_stretch_index, 3),
    "heap-index": (m_heap_index, 2),
    "break-sig": (m_break_sig, 4),
    "strings": (m_strings, 2),
    "headers": (m_headers, 1),
    "pe-parts": (m_pe_parts, 1),
}


# The mutations "auto" chooses from, by version: a seed's damage stays the
# same once a recipe names it (auto@1), whatever is added later.
AUTO_VERSIONS = {1: sorted(set(MUTATIONS) - {"headers", "pe-parts"}),
                 2: sorted(set(MUTATIONS) - {"pe-parts"}), 3: sorted(MUTATIONS)}
AUTO = 3


def damage(pe, seed, spec="auto"):
    """Damage pe.data as seed and spec say; the list of what was done.
    spec: "auto" or "auto@V" (one to three mutations chosen by the seed
    from version V's list, the latest by default), or NAME[:N][,NAME...]
    (those, in order; bytes:N overwrites N bytes)."""
    r = random.Random(seed)
    done = []
    if spec == "auto":
        spec = "auto@%d" % AUTO
    if spec.startswith("auto@"):
        names = AUTO_VERSIONS[int(spec[5:])]
        weights = [MUTATIONS[n][1] for n in names]
        for name in r.choices(names, weights, k=r.choice([1, 1, 2, 3])):
            done.append(MUTATIONS[name][0](r, pe))
        return done
    for part in spec.split(","):
        name, _, arg = part.partition(":")
        if name not in MUTATIONS:
            raise SystemExit("unknown mutation %r (known: %s)" % (name, ", ".join(sorted(MUTATIONS))))
        if name == "bytes" and arg:
            done.append(m_bytes(r, pe, int(arg)))
        else:
            done.append(MUTATIONS[name][0](r, pe))
    return done


# ---------------------------------------------------------------------------
# What runs on a damaged file

LISTINGS = ["info", "tables", "streams", "strings", "heap strings", "heap us", "heap blob",
            "heap guid", "types -a", "find *", "find *::*", "memberrefs -a", "typerefs -a",
            "methodspecs", "typespecs", "unresolved -a", "refs", "exported", "attrs",
            "constants", "validate -a", "modules", "il -a"]
# Listings no style changes, run once: the PE headers, debug entries,
# ReadyToRun header, Win32 resources, the strong-name signature, and the
# manifest resources.
PE_LISTINGS = ["pe", "sn", "resources"]
SIG_TABLES = {"MethodDef", "MemberRef", "Field", "Property", "StandAloneSig", "TypeSpec",
              "MethodSpec"}
INST_TABLES = {"TypeSpec", "MethodSpec", "MethodDef", "MemberRef"}
RESOLVE_TABLES = {"TypeRef", "MemberRef", "ExportedType"}
STYLES = ["full", "reflection", "il", "friendly"]


def sample_rids(r, n, k=3):
    rids = {1, n, n + 1} if n else {1}
    if n > 2:
        rids.update(r.sample(range(2, n), min(k, n - 2)))
    return sorted(rids)


def type_names(r, pe, k):
    """Up to k names of the file's TypeDefs as `type NAME` takes them:
    Namespace.Name, Outer+Inner, and the forms the commands print."""
    md, d = pe.md, pe.data
    t = mc.TABLE_ID["TypeDef"]
    if not md.rows(t):
        return []
    enclosing = {}
    nc = mc.TABLE_ID["NestedClass"]
    for rid in range(1, md.rows(nc) + 1):
        enclosing[md.get(d, "NestedClass", rid, "NestedClass")] = \
            md.get(d, "NestedClass", rid, "EnclosingClass")

    def name(rid, depth=0):
        try:
            n = md.string(d, md.get(d, "TypeDef", rid, "TypeName"))
            ns = md.string(d, md.get(d, "TypeDef", rid, "TypeNamespace"))
        except (ValueError, IndexError):
            return None
        if rid in enclosing and depth < 8:
            outer = name(enclosing[rid], depth + 1)
            return outer + "+" + n if outer else None
        return ns + "." + n if ns else n

    out = []
    for rid in r.sample(range(1, md.rows(t) + 1), min(k, md.rows(t))):
        nm = name(rid)
        if not nm or not re.fullmatch(r"[A-Za-z0-9_.+`<>,\[\]-]+", nm):
            continue
        out.append(nm)
        m = re.match(r"(.*)`(\d+)$", nm)
        if m and int(m.group(2)) < 8:
            out.append("%s<%s>" % (m.group(1), ",".join("T%d" % i for i in range(int(m.group(2))))))
    out += ["Dictionary<TKey,TValue>.Enumerator", "List<>", "System.Object", "<Module>",
            "Foo<Bar<Baz>>[]", "A+B+C"]
    return out


def shell_commands(r, pe, peer):
    """The commands of one case: each listing, dump of every table, token
    commands on tokens of every table, type NAME; then, with an intact
    module of the same framework current, what resolves into this one."""
    # The listings in the default style, then again in another: the styles
    # take different paths through the printers.
    cmds = LISTINGS + PE_LISTINGS + ["set style %s" % r.choice(STYLES[1:])] + LISTINGS
    for t in sorted(mc.TABLES):
        name = mc.TABLES[t][0]
        cmds.append("dump %s" % name)
    for t in present_tables(pe):
        tb = pe.md.tables[t]
        cmds.append("dump %s %d %d" % (tb.name, r.randrange(1, tb.rows + 1), tb.rows + 2))
        cname, kind, _ = r.choice(tb.schema)
        v = get_cell(pe, tb, r.randrange(1, tb.rows + 1), tb.col(cname))
        if kind not in ("STR", "GUID"):
            cmds.append("dump %s where %s=%d" % (tb.name, cname, v))
        for rid in sample_rids(r, tb.rows):
            tok = "0x%02x%06x" % (t, rid & 0xFFFFFF)
            cmds.append("token " + tok)
            if tb.name in SIG_TABLES:
                cmds.append("sig " + tok)
            if tb.name in INST_TABLES:
                cmds.append("inst " + tok)
            if tb.name in RESOLVE_TABLES:
                cmds.append("resolve -t " + tok)
            if r.random() < 0.3:
                cmds.append("attrs " + tok)
            if tb.name in ("TypeDef", "TypeRef", "TypeSpec"):
                cmds.append("type " + tok)
            if tb.name == "MethodDef":  # no draw from r: recipes keep their commands
                cmds += ["il " + tok, "il --raw " + tok]
    for h, hn in (("#Strings", "strings"), ("#Blob", "blob"), ("#US", "us")):
        if h in pe.md.heaps and pe.md.heaps[h].size:
            for _ in range(2):
                cmds.append("heap %s %d" % (hn, r.randrange(pe.md.heaps[h].size + 2)))
    for nm in type_names(r, pe, 6):
        cmds.append("type " + nm)
    # A few resources by name: a resource set's entries are parsed.
    mr = mc.TABLE_ID["ManifestResource"]
    for rid in range(1, min(pe.md.rows(mr), 4) + 1):
        try:
            nm = pe.md.string(pe.data, pe.md.get(pe.data, "ManifestResource", rid, "Name"))
        except (ValueError, IndexError):
            continue
        if re.fullmatch(r"[A-Za-z0-9_.+-]+", nm):
            cmds.append("resources " + nm)
    cmds += ["set style full", "find *", "memberrefs"]
    if peer:
        # Resolution from an intact module into the damaged one.
        cmds += ["open %s" % peer, "typerefs -a", "memberrefs -a", "unresolved -a",
                 "use 1", "typerefs -a", "memberrefs -a", "resolve -t 0x01000001",
                 "close -a"]
    return cmds


def batch_lines(r, pe, path):
    """PATH TOKEN lines naming tokens of every table, and some that name
    nothing."""
    lines = []
    for t in sorted(mc.TABLES):
        n = pe.md.rows(t)
        for rid in sample_rids(r, min(n, 0xFFFFFF), 5):
            lines.append("%s 0x%02x%06x" % (path, t, rid & 0xFFFFFF))
    lines += ["%s 0x00000000" % path, "%s 0x70000001" % path, "%s 0xff000001" % path,
              "%s 0x06ffffff" % path]
    r.shuffle(lines)
    return lines


# ---------------------------------------------------------------------------
# Running


SANITIZER_MARKS = ("runtime error:", "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                   "ERROR: UndefinedBehaviorSanitizer", "SUMMARY: AddressSanitizer",
                   "SUMMARY: UndefinedBehaviorSanitizer", "talloc: access after free",
                   "Bad talloc magic")


class Runner:
    def __init__(self, mdinspect, timeout, workdir, verbose):
        self.mdinspect = mdinspect
        self.timeout = timeout
        self.workdir = workdir
        self.verbose = verbose
        self.env = dict(os.environ)
        # A sanitizer's report must not look like a documented status.
        for var in ("ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            self.env[var] = (self.env.get(var, "") + ":exitcode=86").lstrip(":")
        self.env["UBSAN_OPTIONS"] += ":print_stacktrace=1:halt_on_error=1"
        self.env.pop("MDINSPECT_PAGER", None)
        self.env["PAGER"] = "cat"
        self.env["HOME"] = workdir  # no history or settings of the user's
        self.execs = 0

    def run(self, argv, stdin_text=None):
        """(problem or None, returncode, stderr tail) of one process."""
        self.execs += 1
        try:
            p = subprocess.run(argv, input=stdin_text.encode() if stdin_text is not None else None,
                               stdin=None if stdin_text is not None else subprocess.DEVNULL,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=self.env, timeout=self.timeout, cwd=self.workdir)
        except subprocess.TimeoutExpired as e:
            err = (e.stderr or b"").decode("utf-8", "replace")
            return "timed out after %gs" % self.timeout, None, err[-2000:]
        err = p.stderr.decode("utf-8", "replace")
        rc = p.returncode
        problem = None
        if rc < 0:
            try:
                problem = "killed by %s" % signal.Signals(-rc).name
            except ValueError:
                problem = "killed by signal %d" % -rc
        elif any(m in err for m in SANITIZER_MARKS):
            problem = "sanitizer report (exit %d)" % rc
        elif rc not in (0, 1, 2):
            problem = "exit status %d (documented: 0, 1, 2)" % rc
        tail = err
        for m in SANITIZER_MARKS:
            i = err.find(m)
            if i >= 0:
                tail = err[max(0, i - 200):]
                break
        return problem, rc, tail[-3000:] if tail is err else tail[:3000]

    def shell(self, path, cmds):
        script = os.path.join(self.workdir, "script.mdi")
        with open(script, "w") as f:
            f.write("\n".join(cmds) + "\n")
        return self.run([self.mdinspect, "-f", script, path])

    def batch(self, lines, json_out):
        argv = [self.mdinspect, "batch"] + (["--json"] if json_out else [])
        return self.run(argv, "\n".join(lines) + "\n")

    def check_file(self, path, cmds, lines):
        """None, or (what failed, command, stderr tail)."""
        problem, rc, err = self.shell(path, cmds)
        if rc == 2:
            # A script that does not parse runs nothing: the harness's fault.
            return "the script did not parse (exit 2)", "mdinspect -f SCRIPT", err
        if problem:
            # The first command that fails alone, in the state the script
            # had there (its style, the modules opened and used).
            culprit = "(only the whole script)"
            state = []
            for c in cmds:
                if c.startswith(("set ", "open ", "use ")):
                    state.append(c)
                    continue
                if c.startswith("close"):
                    state = [x for x in state if x.startswith("set ")]
                    continue
                p1, _, e1 = self.shell(path, state + [c])
                if p1:
                    culprit, problem, err = "; ".join(state + [c]), p1, e1
                    break
            return problem, "mdinspect -c '%s'" % culprit, err
        for js in (False, True):
            problem, _, err = self.batch(lines, js)
            if problem:
                return problem, "mdinspect batch%s (PATH TOKEN lines)" % (" --json" if js else ""), err
        return None


def parse_pe(data):
    try:
        return mc.PE(data)
    except Exception:  # the parser assumes a well-formed file; skip others
        return None


def print_tail(err):
    """A sanitizer's report from its start, else the last lines."""
    lines = err.strip().splitlines()
    marked = any(m in err for m in SANITIZER_MARKS)
    for line in (lines[:60] if marked else lines[-12:]):
        print("  | " + line)


def run_case(runner, seed, path, spec, peers, keep_dir, data_cache):
    """Damage path with seed, run everything; True when it passed."""
    data = data_cache.get(path)
    if data is None:
        with open(path, "rb") as f:
            data = f.read()
        data_cache.clear()
        data_cache[path] = data
    pe = parse_pe(data)
    if pe is None:
        return None
    r = random.Random(seed ^ 0x5EED)
    done = damage(pe, seed, spec)
    out = os.path.join(runner.workdir, os.path.basename(path))
    with open(out, "wb") as f:
        f.write(pe.data)
    orig = parse_pe(data)  # offsets of the intact file for the commands
    peer = None
    cands = [p for p in peers if os.path.basename(p) != os.path.basename(path)]
    if cands:
        peer = r.choice(cands)
    cmds = shell_commands(r, orig, peer)
    lines = batch_lines(r, orig, out)
    if runner.verbose:
        print("seed %d %s: %s (%d commands, %d batch lines)" % (
            seed, os.path.basename(path), "; ".join(done), len(cmds), len(lines)), flush=True)
    res = runner.check_file(out, cmds, lines)
    if res is None:
        return True
    problem, what, err = res
    print("FAIL seed %d file %s (%d bytes, sha1 %s) mutation %s: %s: %s" % (
        seed, path, len(data), sha1_12(data), "; ".join(done), what, problem), flush=True)
    print("  reproduce: tests/damage/damage.py --file %s --seed %d --mutation %s" % (
        path, seed, "auto@%d" % AUTO if spec == "auto" else spec))
    if keep_dir:
        os.makedirs(keep_dir, exist_ok=True)
        kept = os.path.join(keep_dir, "seed-%d-%s" % (seed, os.path.basename(path)))
        shutil.copyfile(out, kept)
        print("  damaged file kept: %s" % kept)
    print_tail(err)
    return False


def default_mdinspect():
    b = os.environ.get("MDT_BUILDDIR") or os.path.join(TOP, "build")
    return os.environ.get("MDINSPECT") or os.path.join(b, "mdinspect", "mdinspect")


def peers_of(files):
    """Intact modules to open beside a damaged one: facades and core
    libraries that many assemblies reference."""
    want = {"System.Runtime.dll", "System.Collections.dll", "System.Linq.dll", "mscorlib.dll",
            "System.Core.dll", "netstandard.dll", "System.dll"}
    return [p for p in files if os.path.basename(p) in want]


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=1, help="first seed (default 1)")
    ap.add_argument("--cases", type=int, help="run this many cases")
    ap.add_argument("--seconds", type=float,
                    help="run cases for this long (default $MDT_DAMAGE_SECONDS, else 60)")
    ap.add_argument("--file", action="append", help="damage this file (repeatable) "
                    "instead of the installed frameworks")
    ap.add_argument("--dir", action="append", help="a folder of assemblies to damage")
    ap.add_argument("--max-size", type=int, default=4 << 20,
                    help="skip larger inputs (bytes, default 4 MiB)")
    ap.add_argument("--mutation", default="auto", help="NAME[:N][,NAME...] instead of auto (%s)"
                    % ", ".join(sorted(MUTATIONS)))
    ap.add_argument("--files", nargs="+", help="run the commands on these files as they are")
    ap.add_argument("--recipes", help="replay the recipes of this TSV file")
    ap.add_argument("--mdinspect", default=default_mdinspect())
    ap.add_argument("--timeout", type=float, help="seconds per process (default 60, "
                    "x4 when $MDT_SANITIZED=1)")
    ap.add_argument("--keep", help="copy failing damaged files into this folder")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv[1:])

    if not os.access(a.mdinspect, os.X_OK):
        print("damage.py: %s is not built" % a.mdinspect, file=sys.stderr)
        return 99
    sanitized = os.environ.get("MDT_SANITIZED") == "1"
    timeout = a.timeout or (240.0 if sanitized else 60.0)
    work = tempfile.mkdtemp(prefix="mdt-damage.")
    runner = Runner(os.path.abspath(a.mdinspect), timeout, work, a.verbose)
    passed = failed = skipped = 0
    t0 = time.time()
    try:
        if a.files:
            r = random.Random(a.seed)
            for path in a.files:
                data = open(path, "rb").read()
                pe = parse_pe(data)
                try:
                    # Damaged files: the parser may misread them.
                    cmds = shell_commands(r, pe, None)
                    lines = batch_lines(r, pe, os.path.abspath(path))
                except Exception:
                    cmds = LISTINGS + ["set style %s" % r.choice(STYLES[1:])] + LISTINGS + \
                        ["dump %s" % mc.TABLES[t][0] for t in sorted(mc.TABLES)]
                    lines = ["%s 0x%02x000001" % (os.path.abspath(path), t) for t in sorted(mc.TABLES)]
                res = runner.check_file(os.path.abspath(path), cmds, lines)
                if res is None:
                    passed += 1
                    continue
                failed += 1
                print("FAIL %s: %s: %s" % (path, res[1], res[0]), flush=True)
                print_tail(res[2])
        elif a.recipes:
            dirs = default_dirs()
            for line in open(a.recipes):
                if line.startswith("#") or not line.strip():
                    continue
                f = line.rstrip("\n").split("\t")
                name, seed, spec, sha = f[0], int(f[1]), f[2], f[3]
                found = [p for d in dirs for p in [os.path.join(d, name)] if os.path.isfile(p)]
                if a.file:
                    found = [p for p in a.file if os.path.basename(p) == name] or found
                if not found:
                    print("skip recipe %s seed %d: no %s installed" % (name, seed, name))
                    skipped += 1
                    continue
                data = open(found[0], "rb").read()
                note = "" if sha1_12(data) == sha else \
                    " (this %s differs from the one the recipe was found on: sha1 %s, not %s)" % (
                        name, sha1_12(data), sha)
                ok = run_case(runner, seed, found[0], spec, peers_of(list_inputs(dirs, 1 << 30)),
                              a.keep, {})
                if ok is None:
                    print("skip recipe %s seed %d: not parsed" % (name, seed))
                    skipped += 1
                elif ok:
                    passed += 1
                    if a.verbose or note:
                        print("recipe %s seed %d %s: ok%s" % (name, seed, spec, note))
                else:
                    failed += 1
            if skipped and not passed and not failed:
                print("damage.py: none of the recipes' files is installed")
                return 77
        else:
            if a.file:
                files = a.file
            else:
                dirs = a.dir or default_dirs()
                files = list_inputs(dirs, a.max_size)
                if not files:
                    print("damage.py: no real framework found (.NET shared framework via dotnet, "
                          "or /usr/lib/mono/4.5; or give --dir/--file)")
                    return 77
            peers = peers_of(files) if not a.file else []
            seconds = a.seconds
            if seconds is None and a.cases is None:
                seconds = float(os.environ.get("MDT_DAMAGE_SECONDS", "60"))
            print("damage.py: %d files, seeds from %d, %s" % (
                len(files), a.seed, "%d cases" % a.cases if a.cases else "%gs" % seconds), flush=True)
            seed = a.seed
            cache = {}
            last_note = t0
            while True:
                if time.time() - last_note >= 600:
                    # A long campaign says where it is every ten minutes.
                    last_note = time.time()
                    print("damage.py: %.0fs, seed %d, %d passed, %d failed" % (
                        last_note - t0, seed, passed, failed), flush=True)
                if a.cases is not None and passed + failed >= a.cases:
                    break
                if seconds is not None and time.time() - t0 >= seconds:
                    break
                path = random.Random(seed ^ 0xF11E).choice(files) if not a.file or len(files) > 1 \
                    else files[0]
                ok = run_case(runner, seed, path, a.mutation, peers, a.keep, cache)
                seed += 1
                if ok is None:
                    skipped += 1
                elif ok:
                    passed += 1
                else:
                    failed += 1
            print("damage.py: seeds %d-%d in %.0fs, %d processes, %d files not parsed" % (
                a.seed, seed - 1, time.time() - t0, runner.execs, skipped))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    # Cases are counted here (a campaign prints only its failures).
    mdtcheck.add(passed, failed)
    return mdtcheck.closing()


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Generate the malformed-input cases of tests/corrupt.

Each case is a small file made deterministically from a known-good base
(mostly data/corpus/asmresolver/HelloWorld.exe) by one named mutation, or
crafted from scratch (raw "BSJB" metadata). The script parses the base
itself -- PE headers, section table, CLI header, metadata root, stream
headers, the #~ header, table rows and heaps -- so each mutation is written
in terms of named fields, not magic offsets. Table layouts come from
libmdtools/include/mdtools/tables.def, the same schema the library uses.

Writes tests/corrupt/cases/<name>.bin and tests/corrupt/cases.tsv:

    name <TAB> expect <TAB> code <TAB> message-substring <TAB> what is wrong

expect is one of
    open-error            open fails with `code`; mdt_error_message() contains the substring
    mapped-open-error     the same for the file laid out as a loader lays it out
                          (tests/common/layout.c: each section at its RVA, whole
                          pages, the gaps between unreadable) and opened with
                          mdt_image_open_mapped_ranges on the readable ranges
    mapped-open-warn      open-warn for the file laid out that way
    open-warn             open succeeds, a warning contains the substring, and a
                          full walk of the image finds no error (the oddity is
                          accepted and the rest reads normally)
    cell-error            open succeeds; walking every cell fails at least once
                          with `code` and a message containing the substring
    us-error              as cell-error, for the walk over the #US heap
    open-warn+cell-error  both: the substring is "WARNING && ERROR"
    open-warn+us-error    the same with a #US error
    sig-error             open succeeds and every cell reads; decoding the
                          signature of every row that carries one fails at
                          least once with `code` and the substring (and every
                          printer refuses the signature a failed decode left)

Usage: make-cases.py [--check] [--dump FILE]
    (no option)  regenerate cases/ and cases.tsv
    --check      regenerate in memory and fail if the files on disk differ
    --dump FILE  print what the parser sees in FILE (for writing new cases)
"""

import os
import random
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
CORPUS = os.path.join(TOP, "data", "corpus")
TABLES_DEF = os.path.join(TOP, "libmdtools", "include", "mdtools", "tables.def")
HELLO = "asmresolver/HelloWorld.exe"

# ---------------------------------------------------------------------------
# Schema (ECMA-335 II.22, II.24.2.6), read from tables.def

NOTABLE = 0xFF


def load_schema(path):
    text = re.sub(r"/\*.*?\*/", "", open(path).read(), flags=re.S)
    coded = {}  # name -> (tag_bits, [table ids])
    order = []  # coded index names in declaration order
    tables = {}  # id -> (name, sort_col, [(col name, kind, arg)])
    cur = None
    for m in re.finditer(r"(MDT_CODED|MDT_CODED_TAG|MDT_TABLE|MDT_COL)\(([^)]*)\)", text):
        macro, args = m.group(1), [a.strip() for a in m.group(2).split(",")]
        if macro == "MDT_CODED":
            coded[args[0]] = (int(args[1]), [])
            order.append(args[0])
        elif macro == "MDT_CODED_TAG":
            coded[args[0]][1].append(NOTABLE if args[1] == "MDT_NOTABLE" else int(args[1], 0))
        elif macro == "MDT_TABLE":
            cur = int(args[0], 0)
            tables[cur] = (args[1], int(args[2]), [])
        elif macro == "MDT_COL":
            arg = args[3]
            arg = arg[len("MDT_CI_"):] if arg.startswith("MDT_CI_") else int(arg, 0)
            tables[cur][2].append((args[1], args[2], arg))
    return tables, coded


TABLES, CODED = load_schema(TABLES_DEF)
TABLE_ID = {v[0]: k for k, v in TABLES.items()}


def tid(name):
    return TABLE_ID[name]


# ---------------------------------------------------------------------------
# Little helpers


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def u64(b, o):
    return struct.unpack_from("<Q", b, o)[0]


def put16(b, o, v):
    struct.pack_into("<H", b, o, v)


def put32(b, o, v):
    struct.pack_into("<I", b, o, v)


def put64(b, o, v):
    struct.pack_into("<Q", b, o, v)


def read_compressed(b, o):
    """(value, bytes used) of the compressed integer at b[o]."""
    if b[o] & 0x80 == 0:
        return b[o], 1
    if b[o] & 0xC0 == 0x80:
        return (b[o] & 0x3F) << 8 | b[o + 1], 2
    return (b[o] & 0x1F) << 24 | b[o + 1] << 16 | b[o + 2] << 8 | b[o + 3], 4


def align(n, a):
    return (n + a - 1) // a * a


# ---------------------------------------------------------------------------
# Metadata (ECMA-335 II.24): root, streams, #~ layout


class Stream:
    def __init__(self, hdr, offset, size, name, hdr_len):
        self.hdr = hdr          # file offset of the stream header
        self.offset = offset    # from the metadata root
        self.size = size
        self.name = name
        self.hdr_len = hdr_len  # 8 + padded name


class Table:
    def __init__(self, tid, rows):
        self.id = tid
        self.name, self.sort_col, self.schema = TABLES[tid]
        self.rows = rows
        self.count_off = None   # file offset of the row count
        self.off = None         # file offset of row 1
        self.col_off = []
        self.col_w = []
        self.row_size = 0

    def col(self, name):
        for i, c in enumerate(self.schema):
            if c[0] == name:
                return i
        raise KeyError("%s has no column %s" % (self.name, name))


class Metadata:
    """What a metadata blob at file offset `base` of `data` says."""

    def __init__(self, data, base, size):
        d = data
        self.base, self.size = base, size
        if d[base:base + 4] != b"BSJB":
            raise ValueError("no BSJB at 0x%x" % base)
        self.vlen_off = base + 12
        vlen = u32(d, base + 12)
        self.version = bytes(d[base + 16:base + 16 + vlen]).rstrip(b"\0").decode()
        p = base + 16 + vlen
        self.flags_off = p
        self.nstreams_off = p + 2
        n = u16(d, p + 2)
        p += 4
        self.streams = []
        for _ in range(n):
            off, sz = u32(d, p), u32(d, p + 4)
            end = d.index(b"\0", p + 8)
            name = bytes(d[p + 8:end]).decode("latin-1")
            hl = 8 + align(len(name) + 1, 4)
            self.streams.append(Stream(p, off, sz, name, hl))
            p += hl
        self.headers_end = p
        self.heaps = {}
        for s in self.streams:  # last wins in #~ metadata
            self.heaps[s.name] = s
        self.parse_tables(d)

    def stream(self, name):
        return self.heaps[name]

    def heap_off(self, name):
        """File offset of a heap's first byte."""
        return self.base + self.heaps[name].offset

    def heap_bytes(self, data, name):
        s = self.heaps[name]
        return bytes(data[self.base + s.offset:self.base + s.offset + s.size])

    def parse_tables(self, d):
        ts = self.heaps.get("#~") or self.heaps.get("#-")
        self.ts = ts
        if ts is None:
            self.tables = {}
            return
        o = self.base + ts.offset
        self.ts_off = o
        self.heap_sizes_off = o + 6
        self.heap_sizes = d[o + 6]
        self.valid_off = o + 8
        self.valid = u64(d, o + 8)
        self.sorted_off = o + 16
        self.sorted = u64(d, o + 16)
        p = o + 24
        self.tables = {}
        for t in range(64):
            if self.valid >> t & 1:
                tb = Table(t, u32(d, p))
                tb.count_off = p
                self.tables[t] = tb
                p += 4
        if self.heap_sizes & 0x40:
            p += 4
        self.rows_end = p
        wide_ci = {}
        for name, (bits, tags) in CODED.items():
            limit = 1 << (16 - bits)
            wide_ci[name] = any(t != NOTABLE and self.rows(t) >= limit for t in tags)
        for t in sorted(self.tables):
            tb = self.tables[t]
            for (cname, kind, arg) in tb.schema:
                if kind == "U8":
                    w = 1
                elif kind == "U16":
                    w = 2
                elif kind == "U32":
                    w = 4
                elif kind == "STR":
                    w = 4 if self.heap_sizes & 1 else 2
                elif kind == "GUID":
                    w = 4 if self.heap_sizes & 2 else 2
                elif kind == "BLOB":
                    w = 4 if self.heap_sizes & 4 else 2
                elif kind in ("TAB", "LIST"):
                    w = 4 if self.rows(arg) > 0xFFFF else 2
                else:
                    w = 4 if wide_ci[arg] else 2
                tb.col_off.append(tb.row_size)
                tb.col_w.append(w)
                tb.row_size += w
            tb.off = p
            p += tb.rows * tb.row_size
        self.tables_end = p

    def rows(self, t):
        return self.tables[t].rows if t in self.tables else 0

    def table(self, name):
        return self.tables[tid(name)]

    def cell_off(self, tname, rid, cname):
        tb = self.table(tname)
        return tb.off + (rid - 1) * tb.row_size + tb.col_off[tb.col(cname)]

    def cell_ts(self, tname, rid, cname):
        """Offset of a cell inside the tables stream (as the library reports it)."""
        return self.cell_off(tname, rid, cname) - self.ts_off

    def get(self, d, tname, rid, cname):
        tb = self.table(tname)
        o = self.cell_off(tname, rid, cname)
        w = tb.col_w[tb.col(cname)]
        return d[o] if w == 1 else u16(d, o) if w == 2 else u32(d, o)

    def set(self, d, tname, rid, cname, v):
        tb = self.table(tname)
        o = self.cell_off(tname, rid, cname)
        w = tb.col_w[tb.col(cname)]
        if w == 1:
            d[o] = v
        elif w == 2:
            put16(d, o, v)
        else:
            put32(d, o, v)

    def cells_of_kind(self, d, kind):
        """(table name, rid, column name, value) of every cell of a kind."""
        out = []
        for t in sorted(self.tables):
            tb = self.tables[t]
            for rid in range(1, tb.rows + 1):
                for (cname, k, _a) in tb.schema:
                    if k == kind:
                        out.append((tb.name, rid, cname, self.get(d, tb.name, rid, cname)))
        return out

    def string(self, d, idx):
        o = self.heap_off("#Strings") + idx
        return bytes(d[o:d.index(b"\0", o)]).decode("utf-8", "replace")


# ---------------------------------------------------------------------------
# PE (ECMA-335 II.25)


class Section:
    def __init__(self, d, hdr):
        self.hdr = hdr
        self.name = bytes(d[hdr:hdr + 8]).rstrip(b"\0").decode("latin-1")
        self.vsize, self.va, self.rsize, self.rptr = struct.unpack_from("<IIII", d, hdr + 8)


class PE:
    def __init__(self, data):
        self.data = bytearray(data)
        d = self.data
        self.lfanew = u32(d, 60)
        self.coff = self.lfanew + 4
        self.nsec_off = self.coff + 2
        self.opt_size_off = self.coff + 16
        self.opt = self.coff + 20
        self.opt_size = u16(d, self.opt_size_off)
        self.magic = u16(d, self.opt)
        plus = self.magic == 0x20B
        self.ndirs_off = self.opt + (108 if plus else 92)
        self.dirs_off = self.ndirs_off + 4
        self.sect_off = self.opt + self.opt_size
        self.sections = [Section(d, self.sect_off + 40 * i) for i in range(u16(d, self.nsec_off))]
        self.cli_rva, self.cli_size = self.dir(14)
        self.cli_off = self.rva2off(self.cli_rva)
        self.md_rva, self.md_size = u32(d, self.cli_off + 8), u32(d, self.cli_off + 12)
        self.md_off = self.rva2off(self.md_rva)
        self.md = Metadata(d, self.md_off, self.md_size)

    def dir(self, i):
        return struct.unpack_from("<II", self.data, self.dirs_off + 8 * i)

    def dir_off(self, i):
        return self.dirs_off + 8 * i

    def section_of(self, rva):
        for s in self.sections:
            if s.va <= rva < s.va + (s.vsize or s.rsize):
                return s
        raise ValueError("RVA 0x%x in no section" % rva)

    def rva2off(self, rva):
        s = self.section_of(rva)
        return s.rptr + rva - s.va

    def section(self, name):
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(name)


def load(rel):
    with open(os.path.join(CORPUS, rel), "rb") as f:
        return PE(f.read())


def dump(path):
    pe = PE(open(path, "rb").read())
    d = pe.data
    print("e_lfanew 0x%x  magic 0x%x  opt_size 0x%x  file 0x%x" % (pe.lfanew, pe.magic, pe.opt_size,
                                                                   len(d)))
    for s in pe.sections:
        print("section %-8s hdr 0x%x va 0x%x vsize 0x%x raw 0x%x+0x%x" % (s.name, s.hdr, s.va, s.vsize,
                                                                         s.rptr, s.rsize))
    for i in range(16):
        r, n = pe.dir(i)
        if r:
            print("dir %2d rva 0x%x size 0x%x" % (i, r, n))
    md = pe.md
    print("CLI header at 0x%x; metadata rva 0x%x size 0x%x file 0x%x version %r" % (
        pe.cli_off, pe.md_rva, pe.md_size, pe.md_off, md.version))
    for s in md.streams:
        print("stream %-9s hdr 0x%x offset 0x%x size 0x%x (file 0x%x)" % (s.name, s.hdr, s.offset, s.size,
                                                                        md.base + s.offset))
    print("#~ at 0x%x heap_sizes 0x%x valid 0x%x sorted 0x%x rows_end 0x%x tables_end 0x%x" % (
        md.ts_off, md.heap_sizes, md.valid, md.sorted, md.rows_end, md.tables_end))
    for t in sorted(md.tables):
        tb = md.tables[t]
        print("  %02x %-16s rows %3d size %2d at 0x%x" % (t, tb.name, tb.rows, tb.row_size, tb.off))
        for rid in range(1, min(tb.rows, 12) + 1):
            vals = []
            for (cname, kind, _a) in tb.schema:
                v = md.get(d, tb.name, rid, cname)
                if kind == "STR":
                    vals.append("%s=%#x(%s)" % (cname, v, md.string(d, v)))
                else:
                    vals.append("%s=%#x" % (cname, v))
            print("     %d: %s" % (rid, " ".join(vals)))
    for h in ("#Strings", "#US", "#Blob", "#GUID"):
        if h in md.heaps:
            print("%s: %r" % (h, md.heap_bytes(d, h)[:200]))



# ---------------------------------------------------------------------------
# Building blocks for cases


def build_md(streams, version="v4.0.30319", vlen=None, nstreams=None):
    """A metadata root (II.24.2.1) with `streams`: a list of (name, bytes).
    Stream data follows the headers, each padded to 4 bytes."""
    v = version.encode() + b"\0"
    vl = align(len(v), 4) if vlen is None else vlen
    root = b"BSJB" + struct.pack("<HHII", 1, 1, 0, vl) + v.ljust(vl, b"\0")[:vl]
    root += struct.pack("<HH", 0, len(streams) if nstreams is None else nstreams)
    names = [n.encode("latin-1") for n, _ in streams]
    off = len(root) + sum(8 + align(len(n) + 1, 4) for n in names)
    headers, data = b"", b""
    for n, (_, blob) in zip(names, streams):
        headers += struct.pack("<II", off + len(data), len(blob)) + n.ljust(align(len(n) + 1, 4), b"\0")
        data += blob + bytes(align(len(blob), 4) - len(blob))
    return root + headers + data


def tables_stream(valid, rows, heap_sizes=0, body=b""):
    """A #~ stream: header, one row count per Valid bit, then `body`."""
    return struct.pack("<IBBBBQQ", 0, 2, 0, heap_sizes, 1, valid, 0) + \
        b"".join(struct.pack("<I", r) for r in rows) + body


def pdb_stream(refd, counts, entry=0, short=None):
    """A #Pdb stream (Portable PDB v1.0): id, entry point, referenced tables,
    row counts; `short` cuts it to that many bytes."""
    b = bytes(range(1, 21)) + struct.pack("<IQ", entry, refd) + \
        b"".join(struct.pack("<I", c) for c in counts)
    return b if short is None else b[:short]


def streams_of(pe):
    """The base image's streams as (name, bytes), in header order."""
    md = pe.md
    return [(s.name, bytes(pe.data[md.base + s.offset:md.base + s.offset + s.size]))
            for s in md.streams]


def replace_stream(streams, name, data):
    return [(n, data if n == name else b) for n, b in streams]


def repack(pe, md):
    """The base image with its metadata replaced by `md`, placed where the
    .reloc section's raw data was (metadata RVA = .reloc's RVA). The base
    relocations are lost, which no metadata reader looks at."""
    d = bytearray(pe.data)
    s = pe.section(".reloc")
    assert s.rptr + s.rsize == len(d), "repack wants .reloc last in the file"
    raw = align(len(md), 0x200)
    d = d[:s.rptr] + md + bytes(raw - len(md))
    put32(d, s.hdr + 8, len(md))
    put32(d, s.hdr + 16, raw)
    put32(d, pe.cli_off + 8, s.va)
    put32(d, pe.cli_off + 12, len(md))
    return d


def repacked_md(pe):
    """File offset of the metadata in what repack(pe, ...) returns."""
    return pe.section(".reloc").rptr


def retable(pe, add=None, name="#~"):
    """The base's tables stream rebuilt with extra tables `add` ({table id:
    [row bytes]}), as a stream called `name`. Column widths must not change."""
    md, d = pe.md, pe.data
    add = add or {}
    valid = md.valid
    for t in add:
        valid |= 1 << t
    hdr = bytearray(d[md.ts_off:md.ts_off + 24])
    put64(hdr, 8, valid)
    counts, rows = b"", b""
    for t in range(64):
        if not valid >> t & 1:
            continue
        if t in add:
            counts += struct.pack("<I", len(add[t]))
            rows += b"".join(add[t])
        else:
            tb = md.tables[t]
            counts += struct.pack("<I", tb.rows)
            rows += bytes(d[tb.off:tb.off + tb.rows * tb.row_size])
    st = [(name if n == md.ts.name else n, b) for n, b in streams_of(pe)]
    return replace_stream(st, name, bytes(hdr) + counts + rows + b"\0" * 4)


def blob_cells(pe):
    """index -> [(table, rid, column)] of every #Blob cell with a non-zero index."""
    refs = {}
    for (t, rid, c, v) in pe.md.cells_of_kind(pe.data, "BLOB"):
        if v:
            refs.setdefault(v, []).append((t, rid, c))
    return refs


# ---------------------------------------------------------------------------
# The cases. Each function returns (bytes, message substring); the decorator
# records name, expectation, error code and what is wrong.

CASES = []


def case(name, expect, code, why):
    def deco(fn):
        CASES.append((name, expect, code, why, fn))
        return fn
    return deco


def hello():
    return load(HELLO)


# --- whole file --------------------------------------------------------------

@case("file-empty", "open-error", "MDT_ETRUNC", "empty file: nothing to identify")
def _():
    return b"", "file too short to identify (under 4 bytes)"


@case("file-3-bytes", "open-error", "MDT_ETRUNC",
      "3-byte file \"BSJ\": too short to identify")
def _():
    return b"BSJ", "file too short to identify (under 4 bytes)"


@case("file-3-bytes-mz", "open-error", "MDT_ETRUNC",
      "3-byte file \"MZ\\x90\": an MZ signature and no room for the DOS header")
def _():
    return b"MZ\x90", "DOS header+0x0 (file 0x0): DOS header: need 64 bytes, 3 left"


@case("random-bytes", "open-error", "MDT_ENOTDOTNET",
      "1 KiB of random bytes (seed 1), not starting with any known magic")
def _():
    d = bytearray(random.Random(1).randbytes(1024))
    d[0] = ord("Z")
    return d, "not a PE (MZ), Webcil (WbIL, \\0asm) or metadata (BSJB) image"


# --- DOS and PE headers (II.25.2) --------------------------------------------

@case("dos-header-truncated", "open-error", "MDT_ETRUNC",
      "file cut after 40 bytes, inside the 64-byte DOS header")
def _():
    return hello().data[:40], "DOS header+0x0 (file 0x0): DOS header: need 64 bytes, 40 left"


@case("elfanew-beyond-eof", "open-error", "MDT_ETRUNC",
      "e_lfanew is 0x7ffffff0, far beyond the end of the file")
def _():
    pe = hello()
    put32(pe.data, 60, 0x7FFFFFF0)
    return pe.data, "DOS header+0x3c (file 0x3c): e_lfanew: offset 0x7ffffff0 beyond end 0x%x" % len(pe.data)


@case("elfanew-at-eof", "open-error", "MDT_ETRUNC",
      "e_lfanew points 2 bytes before the end of the file: no room for the PE signature")
def _():
    pe = hello()
    n = len(pe.data) - 2
    put32(pe.data, 60, n)
    return pe.data, "PE header+0x%x (file 0x%x): PE signature: need 4 bytes, 2 left" % (n, n)


@case("elfanew-garbage", "open-error", "MDT_ENOTDOTNET",
      "e_lfanew points at the DOS stub (0x40), where there is no PE signature")
def _():
    pe = hello()
    put32(pe.data, 60, 0x40)
    return pe.data, "PE header+0x40 (file 0x40): no PE signature at e_lfanew 0x40"


@case("coff-header-truncated", "open-error", "MDT_ETRUNC",
      "file cut 10 bytes into the 20-byte COFF header")
def _():
    pe = hello()
    return pe.data[:pe.coff + 10], "PE header+0x%x (file 0x%x): COFF header: need 20 bytes, 10 left" % (
        pe.coff, pe.coff)


@case("optional-header-magic", "open-error", "MDT_EBADIMAGE",
      "optional header magic 0x10c (neither PE32 0x10b nor PE32+ 0x20b)")
def _():
    pe = hello()
    put16(pe.data, pe.opt, 0x10C)
    return pe.data, "optional header+0x0 (file 0x%x): unknown optional header magic 0x10c" % pe.opt


@case("optional-header-size-beyond-eof", "open-error", "MDT_ETRUNC",
      "SizeOfOptionalHeader is 0xffff, more than the file holds")
def _():
    pe = hello()
    put16(pe.data, pe.opt_size_off, 0xFFFF)
    return pe.data, "file+0x%x (file 0x%x): optional header: 0xffff bytes at 0x%x exceed file size 0x%x" % (
        pe.opt, pe.opt, pe.opt, len(pe.data))


@case("optional-header-too-small", "open-error", "MDT_ETRUNC",
      "SizeOfOptionalHeader is 0x40, too small for the PE32 fields it must hold")
def _():
    pe = hello()
    put16(pe.data, pe.opt_size_off, 0x40)
    return pe.data, "optional header+0x2 (file 0x%x): PE32 optional header: need 94 bytes, 62 left" % (
        pe.opt + 2)


@case("data-directory-count-huge", "open-warn", "-",
      "NumberOfRvaAndSizes is 0x1000; only 16 directories exist")
def _():
    pe = hello()
    put32(pe.data, pe.ndirs_off, 0x1000)
    return pe.data, "NumberOfRvaAndSizes is 4096; using 16"


@case("data-directory-count-14", "open-error", "MDT_ENOTDOTNET",
      "NumberOfRvaAndSizes is 14, so there is no directory 14 (CLI header)")
def _():
    pe = hello()
    put32(pe.data, pe.ndirs_off, 14)
    return pe.data, "PE header: no CLI header: a native PE, not a .NET image"


# --- section table -------------------------------------------------------------

@case("section-count-huge", "open-error", "MDT_EBADIMAGE",
      "NumberOfSections is 65535 (the loader allows 96)")
def _():
    pe = hello()
    put16(pe.data, pe.nsec_off, 0xFFFF)
    return pe.data, "section table+0x%x (file 0x%x): 65535 sections (the loader allows at most 96)" % (
        pe.sect_off, pe.sect_off)


@case("section-table-truncated", "open-error", "MDT_ETRUNC",
      "file cut 20 bytes into the third section header")
def _():
    pe = hello()
    end = pe.sections[2].hdr + 20
    return pe.data[:end], "section table+0x%x (file 0x%x): section table: need 120 bytes, 100 left" % (
        pe.sect_off, pe.sect_off)


@case("sections-overlap", "open-error", "MDT_EBADIMAGE",
      ".rsrc starts at RVA 0x2600, inside .text (0x2000..0x2694)")
def _():
    pe = hello()
    put32(pe.data, pe.sections[1].hdr + 12, 0x2600)
    return pe.data, "section table+0x%x (file 0x%x): sections 1 (.text) and 2 (.rsrc) overlap" % (
        pe.sect_off, pe.sect_off)


@case("sections-out-of-order", "open-error", "MDT_EBADIMAGE",
      "section headers of .text and .rsrc swapped: RVAs not ascending")
def _():
    pe = hello()
    a, b = pe.sections[0].hdr, pe.sections[1].hdr
    pe.data[a:a + 40], pe.data[b:b + 40] = pe.data[b:b + 40], pe.data[a:a + 40]
    return pe.data, "section table+0x%x (file 0x%x): sections 1 (.rsrc) and 2 (.text) are out of order" % (
        pe.sect_off, pe.sect_off)


@case("section-va-wraps", "open-error", "MDT_EBADIMAGE",
      ".reloc at RVA 0xfffff000 with VirtualSize 0x2000 runs past 4 GiB")
def _():
    pe = hello()
    s = pe.sections[2]
    put32(pe.data, s.hdr + 12, 0xFFFFF000)
    put32(pe.data, s.hdr + 8, 0x2000)
    return pe.data, "section table+0x%x (file 0x%x): section 3 (.reloc) wraps the 32-bit address space" % (
        s.hdr, s.hdr)


@case("section-raw-past-eof", "open-warn", "-",
      "file cut at the end of .text: .rsrc and .reloc raw data are missing (metadata is intact)")
def _():
    pe = hello()
    end = pe.section(".rsrc").rptr
    return pe.data[:end], "section .rsrc: raw data 0x%x+0x600 runs past end of file (0x%x)" % (end, end)


# --- debug directory ---------------------------------------------------------------

@case("debug-directory-in-no-section", "open-warn", "-",
      "debug directory RVA 0x3000 lies between .text and .rsrc")
def _():
    pe = hello()
    put32(pe.data, pe.dir_off(6), 0x3000)
    return pe.data, "RVA+0x3000: debug directory: RVA 0x3000 is in no section"


@case("codeview-path-without-nul", "open-warn", "-",
      "the CodeView (RSDS) PDB path's NUL overwritten: the path runs to the end of its entry")
def _():
    pe = hello()
    d = pe.data
    rva, _n = pe.dir(6)
    e = pe.rva2off(rva)
    assert u32(d, e + 12) == 2
    size, ptr = u32(d, e + 16), u32(d, e + 24)
    for i in range(ptr + 24, ptr + size):
        if d[i] == 0:
            d[i] = ord("_")
    return d, "debug entry 0: PDB path not NUL-terminated"


@case("codeview-not-rsds", "open-warn", "-",
      "the CodeView debug entry's data starts with \"XXXX\", not \"RSDS\"")
def _():
    pe = hello()
    d = pe.data
    e = pe.rva2off(pe.dir(6)[0])
    d[u32(d, e + 24):u32(d, e + 24) + 4] = b"XXXX"
    return d, "debug entry 0: CodeView data unreadable or not RSDS"


# --- loader layouts with gaps (tests/common/layout.c) ----------------------------
# Every case is also laid out as CoreCLR's loader on Linux lays out an image
# (the header page, each section's pages at its RVA, PROT_NONE between) and
# opened with mdt_image_open_mapped_ranges; these cases point a header into
# a gap of that layout, which must give a located error, not a fault.

PAGE = 0x1000


def loader_runs(pe):
    """The readable RVA runs [lo, hi) of tests/common/layout.c's layout of
    an undamaged section table: the header page, then each section's pages
    from its RVA to RVA + VirtualSize, merged where they touch."""
    runs = [[0, PAGE]]
    for s in pe.sections:
        lo, hi = s.va // PAGE * PAGE, align(s.va + (s.vsize or s.rsize), PAGE)
        if lo <= runs[-1][1]:
            runs[-1][1] = max(runs[-1][1], hi)
        else:
            runs.append([lo, hi])
    return runs


def run_end(pe, rva):
    """End of the readable run holding rva (a gap starts there)."""
    for lo, hi in loader_runs(pe):
        if lo <= rva < hi:
            return hi
    raise ValueError("RVA 0x%x is in a gap" % rva)


def gap_msg(pe, what, rva):
    return "RVA+0x%x: %s: RVA 0x%x is not in memory declared readable (the mapped image " \
        "has %d readable ranges)" % (rva, what, rva, len(loader_runs(pe)))


def past_msg(pe, what, rva, n):
    return "RVA+0x%x: %s: 0x%x bytes at RVA 0x%x run past the readable memory, which ends " \
        "at RVA 0x%x" % (rva, what, n, rva, run_end(pe, rva))


@case("mapped-cli-header-runs-into-gap", "mapped-open-error", "MDT_ETRUNC",
      "laid out: the CLI header starts 0x28 bytes before the end of .text's last page "
      "and runs 0x20 bytes into the gap after it")
def _():
    pe = hello()
    rva = run_end(pe, pe.cli_rva) - 0x28
    put32(pe.data, pe.dir_off(14), rva)
    return pe.data, past_msg(pe, "CLI header", rva, 72)


@case("mapped-metadata-runs-into-gap", "mapped-open-error", "MDT_ETRUNC",
      "laid out: the metadata size reaches 0x10 bytes into the gap after .text")
def _():
    pe = hello()
    size = run_end(pe, pe.md_rva) - pe.md_rva + 0x10
    put32(pe.data, pe.cli_off + 12, size)
    return pe.data, past_msg(pe, "metadata", pe.md_rva, size)


@case("mapped-debug-directory-in-gap", "mapped-open-warn", "-",
      "laid out: the debug directory moved to the start of the gap after .text")
def _():
    pe = hello()
    rva = run_end(pe, pe.dir(6)[0])
    put32(pe.data, pe.dir_off(6) + 4, 28)
    put32(pe.data, pe.dir_off(6), rva)
    return pe.data, gap_msg(pe, "debug directory", rva)


@case("mapped-codeview-in-gap", "mapped-open-warn", "-",
      "laid out: the CodeView entry's AddressOfRawData is in the gap after .text "
      "(its PointerToRawData, which a flat open reads, is intact)")
def _():
    pe = hello()
    e = pe.rva2off(pe.dir(6)[0])
    put32(pe.data, e + 20, run_end(pe, pe.dir(6)[0]))
    return pe.data, "debug entry 0: CodeView data unreadable or not RSDS"


@case("mapped-section-table-past-header-page", "mapped-open-error", "MDT_ETRUNC",
      "laid out: NumberOfSections 96 puts the section table's end past the header page")
def _():
    pe = hello()
    put16(pe.data, pe.nsec_off, 96)
    return pe.data, "section table+0x%x (file 0x%x): section table: need 3840 bytes, %d left" % (
        pe.sect_off, pe.sect_off, PAGE - pe.sect_off)


@case("mapped-optional-header-past-header-page", "mapped-open-error", "MDT_ETRUNC",
      "laid out: SizeOfOptionalHeader 0xf80 runs the optional header past the header page")
def _():
    pe = hello()
    put16(pe.data, pe.opt_size_off, 0xF80)
    return pe.data, "readable headers+0x%x (file 0x%x): optional header: 0xf80 bytes at 0x%x " \
        "exceed readable headers size 0x%x" % (pe.opt, pe.opt, pe.opt, PAGE)


# --- CLI header (II.25.3.3) ----------------------------------------------------------

@case("no-cli-header", "open-error", "MDT_ENOTDOTNET",
      "data directory 14 (CLI header) is empty: a native PE")
def _():
    pe = hello()
    put32(pe.data, pe.dir_off(14), 0)
    put32(pe.data, pe.dir_off(14) + 4, 0)
    return pe.data, "PE header: no CLI header: a native PE, not a .NET image"


@case("cli-header-in-no-section", "open-error", "MDT_ENOTFOUND",
      "CLI header RVA 0x3000 lies between .text and .rsrc")
def _():
    pe = hello()
    put32(pe.data, pe.dir_off(14), 0x3000)
    return pe.data, "RVA+0x3000: CLI header: RVA 0x3000 is in no section"


@case("cli-header-straddles-sections", "open-error", "MDT_EBADIMAGE",
      ".text grown to end where .rsrc starts (0x4000); CLI header at 0x3fe0 runs into .rsrc")
def _():
    pe = hello()
    put32(pe.data, pe.section(".text").hdr + 8, 0x2000)
    put32(pe.data, pe.dir_off(14), 0x3FE0)
    return pe.data, "RVA+0x3fe0: CLI header: 0x48 bytes at RVA 0x3fe0 straddle the end of section .text"


@case("cli-header-past-raw-data", "open-error", "MDT_ETRUNC",
      ".text VirtualSize 0x2000 > raw size 0x800; CLI header at RVA 0x2900 has no file bytes")
def _():
    pe = hello()
    put32(pe.data, pe.section(".text").hdr + 8, 0x2000)
    put32(pe.data, pe.dir_off(14), 0x2900)
    return pe.data, "RVA+0x2900: CLI header: 0x48 bytes at RVA 0x2900 lie past the raw data of section .text"


@case("cli-header-cb-small", "open-warn", "-", "CLI header cb field is 64, not 72")
def _():
    pe = hello()
    put32(pe.data, pe.cli_off, 64)
    return pe.data, "CLI header cb field is 64 (expected 72)"


@case("cli-directory-size-small", "open-warn", "-",
      "data directory 14 gives the CLI header size 8; the header is 72 bytes")
def _():
    pe = hello()
    put32(pe.data, pe.dir_off(14) + 4, 8)
    return pe.data, "CLI header size 8 is below 72; reading 72 bytes"


@case("debug-directory-huge", "open-warn", "-",
      "debug directory size 0x40000: 9362 entries claimed, 16 read, and those run out of .text")
def _():
    pe = hello()
    put32(pe.data, pe.dir_off(6) + 4, 0x40000)
    return pe.data, "debug directory has 9362 entries; reading the first 16"


@case("cli-no-metadata", "open-error", "MDT_EBADIMAGE", "CLI header's metadata directory is zero")
def _():
    pe = hello()
    put32(pe.data, pe.cli_off + 8, 0)
    put32(pe.data, pe.cli_off + 12, 0)
    return pe.data, "CLI header+0x8 (file 0x%x): CLI header has no metadata directory" % (pe.cli_off + 8)


@case("metadata-in-no-section", "open-error", "MDT_ENOTFOUND",
      "metadata RVA 0x5000 lies between .rsrc and .reloc")
def _():
    pe = hello()
    put32(pe.data, pe.cli_off + 8, 0x5000)
    return pe.data, "RVA+0x5000: metadata: RVA 0x5000 is in no section"


@case("metadata-size-past-section", "open-error", "MDT_EBADIMAGE",
      "metadata size 0x10000 runs past the end of .text")
def _():
    pe = hello()
    put32(pe.data, pe.cli_off + 12, 0x10000)
    return pe.data, "RVA+0x%x: metadata: 0x10000 bytes at RVA 0x%x straddle the end of section .text" % (
        pe.md_rva, pe.md_rva)


@case("metadata-beyond-eof", "open-error", "MDT_ETRUNC",
      "file cut 0x100 bytes into the metadata")
def _():
    pe = hello()
    return pe.data[:pe.md_off + 0x100], "RVA+0x%x (file 0x%x): metadata: 0x%x bytes at RVA 0x%x beyond end of file" % (
        pe.md_rva, pe.md_off, pe.md_size, pe.md_rva)


# --- metadata root and stream headers (II.24.2.1, II.24.2.2) -------------------------

def md_at(pe, off):
    """ "metadata root+0xN (file 0xM)" for file offset `off` inside the root."""
    return "metadata root+0x%x (file 0x%x)" % (off - pe.md_off, off)


@case("bsjb-bad-signature", "open-error", "MDT_EBADIMAGE", "metadata signature \"BSJC\" instead of \"BSJB\"")
def _():
    pe = hello()
    pe.data[pe.md_off + 3] = ord("C")
    return pe.data, "%s: metadata signature is 0x434a5342, not BSJB" % md_at(pe, pe.md_off)


@case("version-length-huge", "open-error", "MDT_EBADIMAGE",
      "version string length 260 (at most 255 plus padding to 256)")
def _():
    pe = hello()
    put32(pe.data, pe.md.vlen_off, 260)
    return pe.data, "%s: version string length 260 exceeds 256" % md_at(pe, pe.md.vlen_off)


@case("version-string-truncated", "open-error", "MDT_ETRUNC",
      "metadata size 0x14: the 12-byte version string has only 4 bytes")
def _():
    pe = hello()
    put32(pe.data, pe.cli_off + 12, 0x14)
    return pe.data, "%s: version string: need 12 bytes, 4 left" % md_at(pe, pe.md_off + 16)


@case("version-length-unaligned", "open-warn", "-",
      "version string length 11, not a multiple of 4 (headers follow unaligned)")
def _():
    pe = hello()
    return repack(pe, build_md(streams_of(pe), vlen=11)), \
        "metadata version string length 11 is not a multiple of 4"


@case("stream-count-huge", "open-error", "MDT_EBADIMAGE", "stream count 0x8000")
def _():
    pe = hello()
    put16(pe.data, pe.md.nstreams_off, 0x8000)
    return pe.data, "%s: stream count 32768 is implausible (at most 64)" % md_at(pe, pe.md.nstreams_off)


@case("stream-name-without-nul", "open-error", "MDT_EBADIMAGE",
      "first stream name is 32 'A's with no NUL")
def _():
    pe = hello()
    o = pe.md.streams[0].hdr + 8
    pe.data[o:o + 32] = b"A" * 32
    return pe.data, "%s: stream 1 name has no NUL within 32 bytes" % md_at(pe, o)


@case("stream-name-truncated", "open-error", "MDT_ETRUNC",
      "metadata ends 3 bytes into the name of the last stream header")
def _():
    pe = hello()
    s = pe.md.streams[-1]
    # Keep every stream inside the shortened metadata so the name is reached.
    end = s.hdr + 8 + 3 - pe.md_off
    for st in pe.md.streams:
        put32(pe.data, st.hdr, end)
        put32(pe.data, st.hdr + 4, 0)
    put32(pe.data, pe.cli_off + 12, end)
    return pe.data, "%s: stream name: need 32 bytes, 3 left" % md_at(pe, s.hdr + 8)


@case("stream-header-truncated", "open-error", "MDT_ETRUNC",
      "crafted metadata: 2 streams declared, the second header has 6 of its 8 fixed bytes")
def _():
    md = build_md([("#~", b"")])
    md = md[:0x1e] + struct.pack("<H", 2) + md[0x20:] + b"\0" * 6
    return md, "metadata root+0x%x (file 0x%x): stream header: need 4 bytes, 2 left" % (
        len(md) - 2, len(md) - 2)


@case("stream-offset-beyond-metadata", "open-error", "MDT_EBADIMAGE",
      "#Strings offset 0x10000, beyond the 0x4e0-byte metadata")
def _():
    pe = hello()
    s = pe.md.stream("#Strings")
    put32(pe.data, s.hdr, 0x10000)
    return pe.data, "%s: stream #Strings: offset 0x10000 is beyond the metadata (size 0x%x)" % (
        md_at(pe, s.hdr), pe.md_size)


@case("stream-offset-size-wraps", "open-error", "MDT_EBADIMAGE",
      "#Strings size 0xfffffff0: offset + size wraps 32 bits")
def _():
    pe = hello()
    s = pe.md.stream("#Strings")
    put32(pe.data, s.hdr + 4, 0xFFFFFFF0)
    return pe.data, "%s: stream #Strings: offset 0x%x + size 0xfffffff0 wraps" % (md_at(pe, s.hdr), s.offset)


@case("stream-size-past-end", "open-warn", "-",
      "#Blob (the last stream) claims 0x100 more bytes than the metadata has; truncated")
def _():
    pe = hello()
    s = pe.md.stream("#Blob")
    put32(pe.data, s.hdr + 4, s.size + 0x100)
    return pe.data, "stream #Blob: 0x%x bytes at 0x%x run past the metadata end 0x%x; truncated to 0x%x" % (
        s.size + 0x100, s.offset, pe.md_size, s.size)


@case("duplicate-strings", "open-warn", "-",
      "a junk #Strings stream before the real one; in #~ metadata the last one is used")
def _():
    pe = hello()
    st = streams_of(pe)
    st.insert(1, ("#Strings", b"\0junk\0junk\0"))
    return repack(pe, build_md(st)), "duplicate stream #Strings: using the last one (#~ metadata)"


@case("unknown-stream", "open-warn", "-", "an extra stream named \"#Bogus\\x7f\"")
def _():
    pe = hello()
    st = streams_of(pe) + [("#Bogus\x7f", b"12345678")]
    return repack(pe, build_md(st)), "unknown stream \"#Bogus\\x7f\" (0x8 bytes) ignored"


@case("no-tables-stream", "open-error", "MDT_EBADIMAGE", "the #~ stream renamed #X: no tables stream")
def _():
    pe = hello()
    s = pe.md.stream("#~")
    pe.data[s.hdr + 8:s.hdr + 10] = b"#X"
    return pe.data, "metadata root (file 0x%x): no tables stream (#~ or #-)" % pe.md_off


@case("jtd-in-compressed-metadata", "open-warn", "-",
      "an empty #JTD stream in #~ metadata: ignored (it only applies to #-)")
def _():
    pe = hello()
    st = streams_of(pe) + [("#JTD", b"")]
    return repack(pe, build_md(st)), "#JTD stream ignored: it only applies to uncompressed (#-) metadata"


@case("guid-heap-unaligned", "open-warn", "-", "#GUID is 0x18 bytes: a GUID and a half")
def _():
    pe = hello()
    st = streams_of(pe)
    st = replace_stream(st, "#GUID", dict(st)["#GUID"] + b"\xee" * 8)
    return repack(pe, build_md(st)), "#GUID size 0x18 is not a multiple of 16"


@case("strings-no-leading-nul", "open-warn", "-",
      "#Strings starts with 'X' instead of the empty string")
def _():
    pe = hello()
    pe.data[pe.md.heap_off("#Strings")] = ord("X")
    return pe.data, "#Strings does not start with the empty string"


@case("strings-no-final-nul", "open-warn+cell-error", "MDT_EBADIMAGE",
      "#Strings' trailing NULs overwritten: its last string (\"Object\") has no terminator")
def _():
    pe = hello()
    d, md = pe.data, pe.md
    h = md.heap_off("#Strings")
    heap = md.heap_bytes(d, "#Strings")
    body = heap.rstrip(b"\0")
    last = body.rindex(b"\0") + 1
    for i in range(h + len(body), h + len(heap)):
        d[i] = ord("X")
    refs = [(t, r, c) for (t, r, c, v) in md.cells_of_kind(d, "STR") if v == last]
    t, r, c = refs[0]
    return d, "#Strings does not end with a NUL; its last string is unreadable && " \
        "%s row %d column %s at +0x%x (file 0x%x): #Strings index 0x%x: string runs to the end of " \
        "#Strings without a NUL" % (t, r, c, md.cell_ts(t, r, c), md.cell_off(t, r, c), last)


# --- tables stream (II.24.2.6) ---------------------------------------------------------

def ts_at(md, off):
    return "#~+0x%x (file 0x%x)" % (off - md.ts_off, off)


@case("tables-header-truncated", "open-error", "MDT_ETRUNC", "#~ stream size 16: its header needs 24")
def _():
    pe = hello()
    put32(pe.data, pe.md.stream("#~").hdr + 4, 16)
    return pe.data, "%s: tables stream header: need 24 bytes, 16 left" % ts_at(pe.md, pe.md.ts_off)


@case("row-counts-truncated", "open-error", "MDT_ETRUNC",
      "#~ stream size 32: room for 2 of the 10 row counts")
def _():
    pe = hello()
    put32(pe.data, pe.md.stream("#~").hdr + 4, 32)
    return pe.data, "%s: row count: need 4 bytes, 0 left" % ts_at(pe.md, pe.md.ts_off + 32)


@case("valid-unknown-table-bit", "open-error", "MDT_EBADIMAGE",
      "Valid has bit 0x2d set: no such table, so the layout after it is unknown")
def _():
    pe = hello()
    v = pe.md.valid | 1 << 0x2D
    put64(pe.data, pe.md.valid_off, v)
    return pe.data, "%s: Valid mask 0x%016x has bit 0x2d set" % (ts_at(pe.md, pe.md.valid_off), v)


@case("valid-bit-63", "open-error", "MDT_EBADIMAGE", "Valid has bit 0x3f set (beyond every table)")
def _():
    pe = hello()
    v = pe.md.valid | 1 << 0x3F
    put64(pe.data, pe.md.valid_off, v)
    return pe.data, "%s: Valid mask 0x%016x has bit 0x3f set" % (ts_at(pe.md, pe.md.valid_off), v)


@case("row-count-huge", "open-error", "MDT_EBADIMAGE", "TypeDef declares 0x1000000 rows (a rid has 24 bits)")
def _():
    pe = hello()
    o = pe.md.table("TypeDef").count_off
    put32(pe.data, o, 0x1000000)
    return pe.data, "%s: table TypeDef declares 0x1000000 rows (at most 0xFFFFFF)" % ts_at(pe.md, o)


@case("table-rows-beyond-stream", "open-warn+cell-error", "MDT_ETRUNC",
      "#~ stream cut 10 bytes into AssemblyRef, the last table: its only row is unreadable")
def _():
    pe = hello()
    md = pe.md
    tb = md.table("AssemblyRef")
    size = tb.off + 10 - md.ts_off
    put32(pe.data, md.stream("#~").hdr + 4, size)
    return pe.data, "table AssemblyRef: only 0 of 1 rows lie inside #~ && " \
        "AssemblyRef row 1 at +0x%x (file 0x%x): row lies beyond the end of the tables stream" % (
            tb.off - md.ts_off, tb.off)


@case("table-rows-partly-beyond-stream", "open-warn+cell-error", "MDT_ETRUNC",
      "#~ stream cut inside CustomAttribute row 5 (of 10): rows 1-4 read, the rest fail")
def _():
    pe = hello()
    md = pe.md
    tb = md.table("CustomAttribute")
    cut = tb.off + 4 * tb.row_size + 3
    put32(pe.data, md.stream("#~").hdr + 4, cut - md.ts_off)
    r5 = tb.off + 4 * tb.row_size
    return pe.data, "table CustomAttribute: only 4 of 10 rows lie inside #~ && " \
        "CustomAttribute row 5 at +0x%x (file 0x%x): row lies beyond the end of the tables stream" % (
            r5 - md.ts_off, r5)


@case("tables-trailing-bytes", "open-warn", "-", "#~ grown by 0x20 bytes after the last table")
def _():
    pe = hello()
    md = pe.md
    st = streams_of(pe)
    ts = dict(st)["#~"] + b"\0" * 0x20
    pad = md.ts.size - (md.tables_end - md.ts_off)
    return repack(pe, build_md(replace_stream(st, "#~", ts))), \
        "#~ has 0x%x bytes after the last table" % (pad + 0x20)


@case("extra-data", "open-warn", "-",
      "HeapSizes has EXTRA_DATA (0x40) and 4 bytes follow the row counts; tables are read after them")
def _():
    pe = hello()
    md = pe.md
    st = streams_of(pe)
    ts = bytearray(dict(st)["#~"])
    ts[6] |= 0x40
    at = md.rows_end - md.ts_off
    ts[at:at] = struct.pack("<I", 0x0BADF00D)
    return repack(pe, build_md(replace_stream(st, "#~", bytes(ts)))), \
        "HeapSizes has EXTRA_DATA (0x40): skipped 4 bytes, value 0x0badf00d"


@case("table-not-sorted", "open-warn", "-",
      "CustomAttribute row 10's Parent made smaller than row 9's (its Sorted bit is set)")
def _():
    pe = hello()
    md = pe.md
    # HasCustomAttribute: 5 tag bits, tag 2 = TypeRef; TypeRef 1 sorts before Assembly 1.
    md.set(pe.data, "CustomAttribute", 10, "Parent", 1 << 5 | 2)
    return pe.data, "table CustomAttribute is not sorted by Parent as ECMA-335 requires " \
        "(its Sorted bit is set); lookups scan"


@case("pdb-table-without-pdb-stream", "open-warn", "-",
      "crafted metadata: Valid has Document (0x30, 0 rows) but there is no #Pdb stream")
def _():
    return build_md([("#~", tables_stream(1 << 0x30, [0]))]), \
        "portable PDB table Document present without a #Pdb stream"


@case("tables-end-at-file-end", "open-warn", "-",
      "crafted metadata: #~ is the last stream and its last TypeRef row ends at the last byte "
      "of the file (cells are read 4 bytes at a time: open must pad)")
def _():
    strings = b"\0Foo\0Bar\0\0"  # 12 bytes
    # TypeRef (0x01): ResolutionScope, TypeName, TypeNamespace, 2 bytes each;
    # Document (0x30, 0 rows) only for the warning this kind of case needs.
    body = struct.pack("<HHH", 0, 1, 5) + struct.pack("<HHH", 0, 5, 1)
    ts = tables_stream(1 << 0x01 | 1 << 0x30, [2, 0], body=body)
    assert len(ts) % 4 == 0, "the stream must end at the end of the file"
    return build_md([("#Strings", strings), ("#~", ts)]), \
        "portable PDB table Document present without a #Pdb stream"


# --- #Pdb stream (Portable PDB v1.0) -------------------------------------------------------

def pdb_md(pdb):
    md = build_md([("#Pdb", pdb), ("#~", tables_stream(0, []))], version="PDB v1.0")
    return md, u32(md, 0x20)  # root offset of #Pdb = file offset (raw metadata)


@case("pdb-stream-truncated", "open-error", "MDT_ETRUNC",
      "crafted portable PDB: #Pdb stream is 10 bytes, its id alone needs 20")
def _():
    md, o = pdb_md(pdb_stream(0, [], short=10))
    return md, "#Pdb+0x0 (file 0x%x): PDB id: need 20 bytes, 10 left" % o


@case("pdb-row-counts-truncated", "open-error", "MDT_ETRUNC",
      "crafted portable PDB: ReferencedTypeSystemTables names MethodDef but no row count follows")
def _():
    md, o = pdb_md(pdb_stream(1 << 6, []))
    return md, "#Pdb+0x20 (file 0x%x): #Pdb type-system row count: need 4 bytes, 0 left" % (o + 0x20)


@case("pdb-references-pdb-table", "open-error", "MDT_EBADIMAGE",
      "crafted portable PDB: ReferencedTypeSystemTables names Document (0x30), a PDB table")
def _():
    md, o = pdb_md(pdb_stream(1 << 0x30, [1]))
    return md, "#Pdb+0x20 (file 0x%x): #Pdb refers to table 0x30, not a type-system table" % (o + 0x20)


@case("pdb-references-unknown-table", "open-error", "MDT_EBADIMAGE",
      "crafted portable PDB: ReferencedTypeSystemTables has bit 0x2d, no table")
def _():
    md, o = pdb_md(pdb_stream(1 << 0x2D, [1]))
    return md, "#Pdb+0x20 (file 0x%x): #Pdb refers to table 0x2d, not a type-system table" % (o + 0x20)


@case("pdb-row-count-huge", "open-error", "MDT_EBADIMAGE",
      "crafted portable PDB: MethodDef row count 0x1000000 in #Pdb")
def _():
    md, o = pdb_md(pdb_stream(1 << 6, [0x1000000]))
    return md, "#Pdb+0x20 (file 0x%x): #Pdb row count 0x1000000 for MethodDef exceeds 0xFFFFFF" % (o + 0x20)


@case("raw-metadata-bsjb-only", "open-error", "MDT_ETRUNC", "a 4-byte file \"BSJB\": the root header is missing")
def _():
    return b"BSJB", "metadata root+0x4 (file 0x4): metadata root: need 2 bytes, 0 left"


# --- cells: heap indexes, simple and coded indexes, lists (II.22, II.24.2.6) -----------------

def cell_at(md, t, r, c):
    return "%s row %d column %s at +0x%x (file 0x%x)" % (t, r, c, md.cell_ts(t, r, c), md.cell_off(t, r, c))


@case("string-index-beyond-heap", "cell-error", "MDT_EBADIMAGE",
      "TypeDef row 2 TypeName is 0xfff0, beyond the 0x1ec-byte #Strings")
def _():
    pe = hello()
    pe.md.set(pe.data, "TypeDef", 2, "TypeName", 0xFFF0)
    return pe.data, "%s: #Strings index 0xfff0: string index beyond the heap" % cell_at(
        pe.md, "TypeDef", 2, "TypeName")


@case("blob-index-beyond-heap", "cell-error", "MDT_EBADIMAGE",
      "MethodDef row 1 Signature is 0x4000, beyond the 0xd8-byte #Blob")
def _():
    pe = hello()
    pe.md.set(pe.data, "MethodDef", 1, "Signature", 0x4000)
    return pe.data, "%s: #Blob index 0x4000: blob index beyond the heap" % cell_at(
        pe.md, "MethodDef", 1, "Signature")


def last_referenced_blob(pe, nth=0):
    """(heap index, [cells]) of the nth-from-last blob that a cell refers to."""
    refs = blob_cells(pe)
    idx = sorted(refs)[-1 - nth]
    return idx, refs[idx]


@case("blob-length-beyond-heap", "cell-error", "MDT_EBADIMAGE",
      "the last referenced blob's length byte set to 0x7f, past the end of #Blob")
def _():
    pe = hello()
    md = pe.md
    idx, cells = last_referenced_blob(pe)
    pe.data[md.heap_off("#Blob") + idx] = 0x7F
    left = md.stream("#Blob").size - idx - 1
    t, r, c = cells[0]
    return pe.data, "%s: #Blob index 0x%x: blob length 0x7f runs past the heap end (0x%x left)" % (
        cell_at(md, t, r, c), idx, left)


@case("blob-length-prefix-111", "cell-error", "MDT_EBADIMAGE",
      "a referenced blob's length byte is 0xe0: compressed-integer prefix 111 is invalid")
def _():
    pe = hello()
    md = pe.md
    idx, cells = last_referenced_blob(pe, 1)
    pe.data[md.heap_off("#Blob") + idx] = 0xE0
    t, r, c = cells[0]
    return pe.data, "%s: #Blob index 0x%x: bad compressed blob length (prefix 111)" % (
        cell_at(md, t, r, c), idx)


@case("blob-length-truncated", "cell-error", "MDT_ETRUNC",
      "MethodDef row 1 Signature points at #Blob's last byte, made 0xc0: a 4-byte length with 1 byte left")
def _():
    pe = hello()
    md = pe.md
    n = md.stream("#Blob").size
    assert n - 1 not in blob_cells(pe) and md.heap_bytes(pe.data, "#Blob")[-1] == 0
    pe.data[md.heap_off("#Blob") + n - 1] = 0xC0
    md.set(pe.data, "MethodDef", 1, "Signature", n - 1)
    return pe.data, "%s: #Blob index 0x%x: blob length runs past the heap end" % (
        cell_at(md, "MethodDef", 1, "Signature"), n - 1)


# --- signatures: every cell reads, a signature blob does not decode ------------


def sig_at(md, blob_idx, pos):
    """Where the library places an error at byte `pos` of the blob at #Blob
    index `blob_idx` (its length prefix is one byte here)."""
    return "#Blob[0x%x]+0x%x (file 0x%x)" % (blob_idx, pos, md.heap_off("#Blob") + blob_idx + 1 + pos)


@case("memberref-sig-params-cut", "sig-error", "MDT_ETRUNC",
      "MemberRef row 11 (Console.WriteLine(string)) has its signature blob's length cut from 4 to 3: "
      "one parameter declared, none left (a damaged System.Linq.dll crashed mdinspect's sig, "
      "token, memberrefs and find here: issue 25)")
def _():
    pe = hello()
    md = pe.md
    idx = md.get(pe.data, "MemberRef", 11, "Signature")
    o = md.heap_off("#Blob") + idx
    assert bytes(pe.data[o:o + 5]) == b"\x04\x00\x01\x01\x0e"
    pe.data[o] = 3
    return pe.data, "%s: signature: need 1 bytes, 0 left" % sig_at(md, idx, 3)


@case("methoddef-sig-params-cut", "sig-error", "MDT_ETRUNC",
      "MethodDef row 1 (Main(string[])) has its signature blob's length cut from 5 to 3: "
      "one parameter declared, none left (mdinspect's find crashed on such a method: issue 25)")
def _():
    pe = hello()
    md = pe.md
    idx = md.get(pe.data, "MethodDef", 1, "Signature")
    o = md.heap_off("#Blob") + idx
    assert bytes(pe.data[o:o + 6]) == b"\x05\x00\x01\x01\x1d\x0e"
    pe.data[o] = 3
    return pe.data, "%s: signature: need 1 bytes, 0 left" % sig_at(md, idx, 3)


@case("guid-index-beyond-heap", "cell-error", "MDT_EBADIMAGE",
      "Module Mvid is GUID 5; #GUID holds one")
def _():
    pe = hello()
    pe.md.set(pe.data, "Module", 1, "Mvid", 5)
    return pe.data, "%s: #GUID index 0x5: GUID index beyond the heap" % cell_at(pe.md, "Module", 1, "Mvid")


@case("coded-index-bad-tag", "cell-error", "MDT_EBADIMAGE",
      "TypeDef row 2 Extends has tag 3; TypeDefOrRef defines tags 0-2")
def _():
    pe = hello()
    pe.md.set(pe.data, "TypeDef", 2, "Extends", 12 << 2 | 3)
    return pe.data, "%s: coded index tag 3 is not valid (value 0x33)" % cell_at(pe.md, "TypeDef", 2, "Extends")


@case("coded-index-unused-tag", "cell-error", "MDT_EBADIMAGE",
      "CustomAttribute row 1 Type has tag 0, which CustomAttributeType leaves unused")
def _():
    pe = hello()
    pe.md.set(pe.data, "CustomAttribute", 1, "Type", 1 << 3 | 0)
    return pe.data, "%s: coded index tag 0 is not valid (value 0x8)" % cell_at(
        pe.md, "CustomAttribute", 1, "Type")


@case("coded-index-rid-beyond", "cell-error", "MDT_EBADIMAGE",
      "TypeRef row 1 ResolutionScope names AssemblyRef row 9 of 1")
def _():
    pe = hello()
    pe.md.set(pe.data, "TypeRef", 1, "ResolutionScope", 9 << 2 | 2)
    return pe.data, "%s: coded index points at row 9 beyond its table (1 rows)" % cell_at(
        pe.md, "TypeRef", 1, "ResolutionScope")


UNSORTED = "asmresolver/MetadataUnsortedTable.dll"


@case("simple-index-beyond", "cell-error", "MDT_EBADIMAGE",
      "MetadataUnsortedTable.dll: ClassLayout row 2 Parent is TypeDef 80 of 6")
def _():
    pe = load(UNSORTED)
    pe.md.set(pe.data, "ClassLayout", 2, "Parent", 80)
    return pe.data, "%s: index 80 beyond the target table (6 rows)" % cell_at(pe.md, "ClassLayout", 2, "Parent")


@case("fieldlist-backwards", "cell-error", "MDT_EBADIMAGE",
      "MetadataUnsortedTable.dll: TypeDef FieldList 1,3,1,3.. : row 2's run ends before it starts")
def _():
    pe = load(UNSORTED)
    pe.md.set(pe.data, "TypeDef", 2, "FieldList", 3)
    pe.md.set(pe.data, "TypeDef", 3, "FieldList", 1)
    return pe.data, "%s: list ends at 1, before its start 3 or past its table" % cell_at(
        pe.md, "TypeDef", 2, "FieldList")


@case("methodlist-backwards", "cell-error", "MDT_EBADIMAGE",
      "TypeDef row 1 MethodList 3, row 2 MethodList 1: row 1's run ends before it starts")
def _():
    pe = hello()
    pe.md.set(pe.data, "TypeDef", 1, "MethodList", 3)
    pe.md.set(pe.data, "TypeDef", 2, "MethodList", 1)
    return pe.data, "%s: list ends at 1, before its start 3 or past its table" % cell_at(
        pe.md, "TypeDef", 1, "MethodList")


@case("list-start-zero", "cell-error", "MDT_EBADIMAGE", "MethodDef row 1 ParamList is 0 (lists start at 1)")
def _():
    pe = hello()
    pe.md.set(pe.data, "MethodDef", 1, "ParamList", 0)
    return pe.data, "%s: list start 0 outside 1..2" % cell_at(pe.md, "MethodDef", 1, "ParamList")


@case("list-start-beyond", "cell-error", "MDT_EBADIMAGE",
      "TypeDef row 2 MethodList is 9; MethodDef has 2 rows (a run may start at 3)")
def _():
    pe = hello()
    pe.md.set(pe.data, "TypeDef", 2, "MethodList", 9)
    return pe.data, "%s: list start 9 outside 1..3" % cell_at(pe.md, "TypeDef", 2, "MethodList")


@case("assemblyref-token-length", "cell-error", "MDT_EBADIMAGE",
      "AssemblyRef row 1 PublicKeyOrToken blob shortened to 4 bytes; a token has 8")
def _():
    pe = hello()
    md = pe.md
    idx = md.get(pe.data, "AssemblyRef", 1, "PublicKeyOrToken")
    o = md.heap_off("#Blob") + idx
    assert pe.data[o] == 8
    pe.data[o] = 4
    return pe.data, "AssemblyRef row 1 column PublicKeyOrToken: public key token is 4 bytes, not 8"


@case("random-heaps", "cell-error", "MDT_EBADIMAGE",
      "#Blob, #GUID and #US overwritten with random bytes (seed 2); tables and #Strings intact")
def _():
    pe = hello()
    rnd = random.Random(2)
    for h in ("#Blob", "#GUID", "#US"):
        s = pe.md.stream(h)
        o = pe.md.heap_off(h)
        pe.data[o:o + s.size] = rnd.randbytes(s.size)
    heap = pe.md.heap_bytes(pe.data, "#Blob")
    for (t, r, c, v) in pe.md.cells_of_kind(pe.data, "BLOB"):
        msg = blob_problem(heap, v)
        if msg:
            return pe.data, "%s: #Blob index 0x%x: %s" % (cell_at(pe.md, t, r, c), v, msg)
    raise AssertionError("random #Blob reads cleanly")


def blob_problem(heap, idx):
    """What the library says about blob `idx` of `heap` (II.24.2.4), or None."""
    if idx == 0 and (not heap or heap[0] == 0):
        return None
    if idx >= len(heap):
        return "blob index beyond the heap"
    b = heap[idx]
    if b & 0xE0 == 0xE0:
        return "bad compressed blob length (prefix 111)"
    used = 1 if b & 0x80 == 0 else 2 if b & 0xC0 == 0x80 else 4
    if used > len(heap) - idx:
        return "blob length runs past the heap end"
    n, used = read_compressed(heap, idx)
    if n > len(heap) - idx - used:
        return "blob length 0x%x runs past the heap end (0x%x left)" % (n, len(heap) - idx - used)
    return None


@case("no-blob-heap", "open-warn+cell-error", "MDT_ENOHEAP",
      "#Blob renamed #Blox: ignored as unknown, so blob cells have no heap")
def _():
    pe = hello()
    s = pe.md.stream("#Blob")
    pe.data[s.hdr + 8:s.hdr + 13] = b"#Blox"
    return pe.data, "unknown stream \"#Blox\" (0xd8 bytes) ignored && %s: #Blob index 0x%x: no #Blob heap" % (
        cell_at(pe.md, "MethodDef", 1, "Signature"), pe.md.get(pe.data, "MethodDef", 1, "Signature"))


def enc_with_method_ptr(ptr_rows):
    """HelloWorld as uncompressed (#-) metadata with a MethodPtr table."""
    pe = hello()
    rows = [struct.pack("<H", r) for r in ptr_rows]
    md = build_md(retable(pe, {tid("MethodPtr"): rows}, name="#-"))
    return pe, repack(pe, md)


def repacked_cell_at(pe, data, t, r, c):
    """cell_at() for the image repack() made."""
    m = Metadata(data, repacked_md(pe), len(data) - repacked_md(pe))
    return cell_at(m, t, r, c)


@case("methodptr-nil-entry", "cell-error", "MDT_EBADIMAGE",
      "#- metadata with MethodPtr [2, 0]: Program's methods 1..2 map through a nil entry")
def _():
    pe, d = enc_with_method_ptr([2, 0])
    return d, "%s: run position 2 maps to row 0, the nil row" % repacked_cell_at(pe, d, "MethodPtr", 2, "Method")


@case("methodptr-beyond", "cell-error", "MDT_EBADIMAGE",
      "#- metadata with MethodPtr [2, 7]: entry 2 names MethodDef 7 of 2")
def _():
    pe, d = enc_with_method_ptr([2, 7])
    return d, "%s: index 7 beyond the target table (2 rows)" % repacked_cell_at(pe, d, "MethodPtr", 2, "Method")


def tiny_md(valid, rows, body, strings=b"\0"):
    """Raw metadata: a #~ stream with `rows` counts and `body`, and #Strings."""
    return build_md([("#~", tables_stream(valid, rows, body=body)), ("#Strings", strings)])


def tiny_cell(md, t, r, c):
    """cell_at() for raw metadata made by tiny_md()."""
    return cell_at(Metadata(md, 0, len(md)), t, r, c)


@case("coded-index-row-over-24-bits", "open-warn+cell-error", "MDT_EBADIMAGE",
      "crafted metadata: TypeRef 1's ResolutionScope (4 bytes wide: AssemblyRef declares 0x4000 "
      "rows) is 0x04000004, tag Module, row 0x1000001: no token holds that row (it is not TypeRef 1)")
def _():
    # Module row: Generation, Name, Mvid, EncId, EncBaseId; TypeRef row:
    # ResolutionScope (4 bytes), TypeName, TypeNamespace.
    rows = [1, 1, 0x4000]
    body = struct.pack("<HHHHH", 0, 1, 0, 0, 0) + struct.pack("<IHH", 0x04000004, 9, 0)
    md = tiny_md(1 << 0 | 1 << 1 | 1 << 0x23, rows, body, b"\0<Module>\0Foo\0")
    return md, "table AssemblyRef: only 0 of 16384 rows lie inside #~ && " \
        "%s: coded index points at row 16777217 beyond its table (1 rows)" % \
        tiny_cell(md, "TypeRef", 1, "ResolutionScope")


@case("declared-rows-huge-blob-tiny", "open-warn+cell-error", "MDT_ETRUNC",
      "crafted metadata of 120 bytes: TypeDef declares 0xFFFFFF rows, 1 is present; nothing may "
      "be sized by the declared count (a name cache took 256 MB)")
def _():
    # Module row as above; TypeDef row <Module>: Flags, TypeName, TypeNamespace,
    # Extends (4 bytes wide: TypeDef's count), FieldList, MethodList.
    rows = [1, 0xFFFFFF]
    body = struct.pack("<HHHHH", 0, 1, 0, 0, 0) + struct.pack("<IHHIHH", 0, 1, 0, 0, 1, 1)
    md = tiny_md(1 << 0 | 1 << 2, rows, body, b"\0<Module>\0")
    m = Metadata(md, 0, len(md))
    return md, "table TypeDef: only 1 of 16777215 rows lie inside #~ && " \
        "TypeDef row 2 at +0x%x (file 0x%x): row lies beyond the end of the tables stream" % (
            m.cell_ts("TypeDef", 2, "Flags"), m.cell_off("TypeDef", 2, "Flags"))


# --- #US heap (II.24.2.4) ----------------------------------------------------------------

@case("us-length-beyond-heap", "us-error", "MDT_EBADIMAGE",
      "the first user string's length byte is 0x7f, past the end of the 0x1c-byte #US")
def _():
    pe = hello()
    o = pe.md.heap_off("#US") + 1
    pe.data[o] = 0x7F
    return pe.data, "#US+0x1 (file 0x%x): user string length runs past the heap end" % o


@case("us-length-prefix-111", "us-error", "MDT_EBADIMAGE",
      "the first user string's length byte is 0xe0: compressed-integer prefix 111")
def _():
    pe = hello()
    o = pe.md.heap_off("#US") + 1
    pe.data[o] = 0xE0
    return pe.data, "#US+0x1 (file 0x%x): bad compressed user string length" % o


# ---------------------------------------------------------------------------

TSV_HEADER = """\
# Malformed inputs and what mdtools must say about them. Generated by
# make-cases.py (edit the script, not this file); read by test_corrupt.c.
# Columns (tab-separated): name, expect, code, message substring, what is wrong.
# expect: open-error | open-warn | cell-error | us-error | open-warn+cell-error
# ("WARNING && ERROR" substrings) | mapped-open-error | mapped-open-warn (the
# file laid out as a loader does) | sig-error; see make-cases.py for what
# each checks.
"""

EXPECTS = {"open-error", "open-warn", "cell-error", "us-error", "open-warn+cell-error",
           "open-warn+us-error", "mapped-open-error", "mapped-open-warn", "sig-error"}
MAX_SIZE = 8 * 1024


def generate():
    """{relative path: bytes} of every output file."""
    out, lines, seen = {}, [TSV_HEADER], set()
    for (name, expect, code, why, fn) in CASES:
        assert re.fullmatch(r"[a-z0-9][a-z0-9-]*", name), name
        assert name not in seen, "duplicate case " + name
        assert expect in EXPECTS, expect
        assert (code == "-") == expect.endswith("open-warn"), name
        seen.add(name)
        data, msg = fn()
        data = bytes(data)
        assert len(data) <= MAX_SIZE, "%s is %d bytes" % (name, len(data))
        assert ("&&" in msg) == expect.startswith("open-warn+"), name
        for f in (name, expect, code, msg, why):
            assert "\t" not in f and "\n" not in f and f, (name, f)
        out["cases/%s.bin" % name] = data
        lines.append("\t".join((name, expect, code, msg, why)) + "\n")
    out["cases.tsv"] = "".join(lines).encode()
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "--dump":
        dump(argv[2])
        return 0
    out = generate()
    if len(argv) == 2 and argv[1] == "--check":
        bad = []
        for rel, data in sorted(out.items()):
            p = os.path.join(HERE, rel)
            if not os.path.exists(p) or open(p, "rb").read() != data:
                bad.append(rel)
        stale = set(os.listdir(os.path.join(HERE, "cases"))) - \
            {os.path.basename(r) for r in out if r.startswith("cases/")}
        bad += ["cases/" + s + " (not generated)" for s in sorted(stale)]
        for b in bad:
            print("out of date: " + b, file=sys.stderr)
        return 1 if bad else 0
    if len(argv) != 1:
        print(__doc__.split("\n\n")[-1], file=sys.stderr)
        return 2
    os.makedirs(os.path.join(HERE, "cases"), exist_ok=True)
    for rel, data in sorted(out.items()):
        with open(os.path.join(HERE, rel), "wb") as f:
            f.write(data)
    print("%d cases written to %s" % (len(CASES), HERE))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

#!/usr/bin/env python3
"""Rewrite metadata that no compiler writes, in place, in a built PE file.

Usage:
  patch-md.py asmref-rename FILE OLD NEW
      The AssemblyRef row whose Name is OLD gets the name NEW (same length:
      the #Strings bytes are overwritten where they are; every other row
      that shares that string would change too, so the tool refuses when
      another table cell points at it). Used to make SelfFwd forward a type
      to itself.
  patch-md.py asmref-flags FILE NAME FLAGS
      The AssemblyRef row named NAME gets Flags FLAGS (e.g. 0x100,
      Retargetable: no compiler outside the Compact and Portable frameworks
      writes it).
  patch-md.py typeref-scope FILE NAMESPACE NAME nil|module
      The TypeRef row NAMESPACE.NAME (top-level, first match) gets a nil
      ResolutionScope (coded index 0) or the Module scope (Module row 1).

The table layout (ECMA-335 II.24.2.6: row counts, heap index widths, coded
index widths) is computed with the schema of data/tools/md-summary.py.
Strong-name signatures of a patched file no longer verify; nothing in the
tests checks them. Only the standard library is used.
"""
import importlib.util
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "md_summary", os.path.join(HERE, "..", "..", "tools", "md-summary.py"))
mds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(mds)


def layout(b):
    """(tables: {name: (offset of row 1, row size, {col: (offset, size, kind)}, rows)},
    strings heap offset)."""
    kind, secs, cli_rva = mds.pe_cli(b)
    cli = mds.map_rva(secs, cli_rva)
    md = mds.map_rva(secs, mds.u32(b, cli + 8))
    vlen = mds.u32(b, md + 12)
    p = md + 16 + vlen
    nstreams = mds.u16(b, p + 2)
    p += 4
    streams = {}
    for _ in range(nstreams):
        off, size = mds.u32(b, p), mds.u32(b, p + 4)
        e = b.index(b"\0", p + 8)
        name = b[p + 8:e].decode("ascii")
        streams[name] = (off, size)
        p = (e + 4) & ~3
    t = md + streams.get("#~", streams.get("#-"))[0]
    heaps = b[t + 6]
    valid = struct.unpack_from("<Q", b, t + 8)[0]
    counts = {}
    p = t + 24
    for i in range(64):
        if valid >> i & 1:
            counts[mds.TABLES[i]] = mds.u32(b, p)
            p += 4
    if heaps & 0x40:
        p += 4
    sizes = {"S": 4 if heaps & 1 else 2, "G": 4 if heaps & 2 else 2, "B": 4 if heaps & 4 else 2}

    def width(kind):
        if kind in ("u1", "u2", "u4"):
            return int(kind[1])
        if kind in sizes:
            return sizes[kind]
        if kind.startswith("T:"):
            return 2 if counts.get(kind[2:], 0) < 0x10000 else 4
        bits, targets = mds.CODED[kind[2:]]
        most = max(counts.get(x, 0) for x in targets if x)
        return 2 if most < (1 << (16 - bits)) else 4

    tables = {}
    for i in range(64):
        if not valid >> i & 1:
            continue
        name = mds.TABLES[i]
        cols, off = {}, 0
        for spec in mds.SCHEMA[name].split(","):
            k, c = spec.split(" ")
            w = width(k)
            cols[c] = (off, w, k)
            off += w
        tables[name] = (p, off, cols, counts[name])
        p += off * counts[name]
    return tables, md + streams["#Strings"][0]


def cell(b, tables, table, rid, col):
    base, size, cols, _ = tables[table]
    off, w, _ = cols[col]
    at = base + (rid - 1) * size + off
    return at, w, (b[at] if w == 1 else mds.u16(b, at) if w == 2 else mds.u32(b, at))


def string_at(b, strings, i):
    return b[strings + i:b.index(b"\0", strings + i)].decode("utf-8")


def asmref_rename(b, old, new):
    if len(old.encode()) != len(new.encode()):
        sys.exit("patch-md.py: OLD and NEW must have the same length")
    tables, strings = layout(b)
    rows = tables["AssemblyRef"][3]
    for rid in range(1, rows + 1):
        _, _, idx = cell(b, tables, "AssemblyRef", rid, "Name")
        if string_at(b, strings, idx) == old:
            break
    else:
        sys.exit("patch-md.py: no AssemblyRef named %s" % old)
    for tname, (_, _, cols, n) in tables.items():
        for c, (_, _, k) in cols.items():
            if k != "S":
                continue
            for r in range(1, n + 1):
                if (tname, r, c) != ("AssemblyRef", rid, "Name") and \
                        cell(b, tables, tname, r, c)[2] == idx:
                    sys.exit("patch-md.py: %s row %d %s shares the string" % (tname, r, c))
    b[strings + idx:strings + idx + len(new.encode())] = new.encode()


def asmref_flags(b, name, flags):
    tables, strings = layout(b)
    for rid in range(1, tables["AssemblyRef"][3] + 1):
        _, _, idx = cell(b, tables, "AssemblyRef", rid, "Name")
        if string_at(b, strings, idx) == name:
            at, w, _ = cell(b, tables, "AssemblyRef", rid, "Flags")
            b[at:at + w] = flags.to_bytes(w, "little")
            return
    sys.exit("patch-md.py: no AssemblyRef named %s" % name)


def typeref_scope(b, ns, name, scope):
    tables, strings = layout(b)
    for rid in range(1, tables["TypeRef"][3] + 1):
        _, _, n = cell(b, tables, "TypeRef", rid, "TypeName")
        _, _, s = cell(b, tables, "TypeRef", rid, "TypeNamespace")
        at, w, sc = cell(b, tables, "TypeRef", rid, "ResolutionScope")
        if string_at(b, strings, n) == name and string_at(b, strings, s) == ns and sc & 3 != 3:
            value = 0 if scope == "nil" else (1 << 2) | 0  # Module row 1, tag 0
            b[at:at + w] = value.to_bytes(w, "little")
            return
    sys.exit("patch-md.py: no top-level TypeRef %s.%s" % (ns, name))


def main(argv):
    if len(argv) == 5 and argv[1] == "asmref-rename":
        path = argv[2]
        b = bytearray(open(path, "rb").read())
        asmref_rename(b, argv[3], argv[4])
    elif len(argv) == 5 and argv[1] == "asmref-flags":
        path = argv[2]
        b = bytearray(open(path, "rb").read())
        asmref_flags(b, argv[3], int(argv[4], 0))
    elif len(argv) == 6 and argv[1] == "typeref-scope" and argv[5] in ("nil", "module"):
        path = argv[2]
        b = bytearray(open(path, "rb").read())
        typeref_scope(b, argv[3], argv[4], argv[5])
    else:
        sys.exit(__doc__)
    with open(path, "wb") as f:
        f.write(b)


if __name__ == "__main__":
    main(sys.argv)

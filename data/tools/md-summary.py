#!/usr/bin/env python3
"""Print the metadata layout of a fixture: streams and table row counts.

Usage: md-summary.py [--rows Table[,Table...]|all] FILE...

FILE may be a PE image (.dll/.exe/.netmodule), a raw metadata blob starting
with "BSJB" (.md), a bare Webcil payload ("WbIL") or a Webcil .wasm wrapper.
The output is used by data/facts.sh to refresh the row counts in
data/README.md; it is written from ECMA-335 II.24 (metadata root, #~ header)
and II.25 (PE), and from data/webcil/README.md for Webcil. Row counts come
from the #~ (or #-) stream header. --rows also decodes the rows of the
named tables (strings as text, blobs as hex, indexes as tokens) so that
signature bytes can be checked where monodis hides details (pinned,
instance/explicit function pointers). monodis stays the source of names.
Only the standard library is used.
"""
import struct
import sys

TABLES = [
    "Module", "TypeRef", "TypeDef", "FieldPtr", "Field", "MethodPtr",
    "MethodDef", "ParamPtr", "Param", "InterfaceImpl", "MemberRef",
    "Constant", "CustomAttribute", "FieldMarshal", "DeclSecurity",
    "ClassLayout", "FieldLayout", "StandAloneSig", "EventMap", "EventPtr",
    "Event", "PropertyMap", "PropertyPtr", "Property", "MethodSemantics",
    "MethodImpl", "ModuleRef", "TypeSpec", "ImplMap", "FieldRVA", "EncLog",
    "EncMap", "Assembly", "AssemblyProcessor", "AssemblyOS", "AssemblyRef",
    "AssemblyRefProcessor", "AssemblyRefOS", "File", "ExportedType",
    "ManifestResource", "NestedClass", "GenericParam", "MethodSpec",
    "GenericParamConstraint", "0x2D", "0x2E", "0x2F",
    "Document", "MethodDebugInformation", "LocalScope", "LocalVariable",
    "LocalConstant", "ImportScope", "StateMachineMethod",
    "CustomDebugInformation",
]


class Bad(Exception):
    pass


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def uleb(b, o):
    val = shift = 0
    while True:
        byte = b[o]
        o += 1
        val |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return val, o


def map_rva(sections, rva):
    for vsize, va, rawsize, rawptr in sections:
        if va <= rva < va + max(vsize, rawsize):
            if rva - va >= rawsize:
                raise Bad("RVA 0x%x in uninitialised tail" % rva)
            return rawptr + rva - va
    raise Bad("RVA 0x%x in no section" % rva)


def pe_cli(b):
    lfanew = u32(b, 0x3C)
    if b[lfanew:lfanew + 4] != b"PE\0\0":
        raise Bad("no PE signature")
    coff = lfanew + 4
    nsec, optsize = u16(b, coff + 2), u16(b, coff + 16)
    opt = coff + 20
    magic = u16(b, opt)
    dirs = opt + (96 if magic == 0x10B else 112)
    cli_rva = u32(b, dirs + 8 * 14)
    secs = []
    for i in range(nsec):
        s = opt + optsize + 40 * i
        secs.append(struct.unpack_from("<IIII", b, s + 8))
    kind = "PE32" if magic == 0x10B else "PE32+"
    return kind, secs, cli_rva


def webcil_cli(b):
    if b[:4] != b"WbIL":
        raise Bad("no WbIL magic")
    major, minor, nsec, res0 = struct.unpack_from("<HHHH", b, 4)
    cli_rva = u32(b, 12)
    hdr = {0: 28, 1: 32}.get(major)
    if hdr is None:
        raise Bad("unknown Webcil major version %d" % major)
    secs = [struct.unpack_from("<IIII", b, hdr + 16 * i) for i in range(nsec)]
    return "Webcil %d.%d (reserved0=%d)" % (major, minor, res0), secs, cli_rva


def wasm_payload(b):
    """Return (wrapper description, payload offset, payload bytes)."""
    if b[:8] != b"\0asm\x01\0\0\0":
        raise Bad("not a wasm module")
    o = 8
    while o < len(b):
        sid = b[o]
        size, body = uleb(b, o + 1)
        if sid == 11:
            count, p = uleb(b, body)
            segs = []
            for _ in range(count):
                flags, p = uleb(b, p)
                if flags != 1:
                    raise Bad("data segment is not passive (flags %d)" % flags)
                n, p = uleb(b, p)
                segs.append((p, n))
                p += n
            if len(segs) != 2:
                raise Bad("expected 2 data segments, found %d" % len(segs))
            s0 = b[segs[0][0]:segs[0][0] + segs[0][1]]
            psize = u32(s0, 0)
            tsize = u32(s0, 4) if len(s0) >= 8 else 0
            off, n = segs[1]
            if n != psize:
                raise Bad("segment 0 says %d bytes, segment 1 holds %d" % (psize, n))
            return ("wasm wrapper: segment 0 = %d bytes (payloadSize=%d tableSize=%d), "
                    "payload at file offset %d" % (len(s0), psize, tsize, off)), off, b[off:off + n]
        o = body + size
    raise Bad("no data section")


# Column schemas, ECMA-335 II.22 (plus the #~ Ptr tables of II.24.2.6).
# u1/u2/u4 constants, S #Strings index, G #GUID index, B #Blob index,
# T:Name simple index into table Name, C:Name coded index (II.24.2.6).
CODED = {
    "TypeDefOrRef": (2, ["TypeDef", "TypeRef", "TypeSpec"]),
    "HasConstant": (2, ["Field", "Param", "Property"]),
    "HasCustomAttribute": (5, ["MethodDef", "Field", "TypeRef", "TypeDef", "Param",
                               "InterfaceImpl", "MemberRef", "Module", "DeclSecurity",
                               "Property", "Event", "StandAloneSig", "ModuleRef",
                               "TypeSpec", "Assembly", "AssemblyRef", "File",
                               "ExportedType", "ManifestResource", "GenericParam",
                               "GenericParamConstraint", "MethodSpec"]),
    "HasFieldMarshal": (1, ["Field", "Param"]),
    "HasDeclSecurity": (2, ["TypeDef", "MethodDef", "Assembly"]),
    "MemberRefParent": (3, ["TypeDef", "TypeRef", "ModuleRef", "MethodDef", "TypeSpec"]),
    "HasSemantics": (1, ["Event", "Property"]),
    "MethodDefOrRef": (1, ["MethodDef", "MemberRef"]),
    "MemberForwarded": (1, ["Field", "MethodDef"]),
    "Implementation": (2, ["File", "AssemblyRef", "ExportedType"]),
    "CustomAttributeType": (3, [None, None, "MethodDef", "MemberRef", None]),
    "ResolutionScope": (2, ["Module", "ModuleRef", "AssemblyRef", "TypeRef"]),
    "TypeOrMethodDef": (1, ["TypeDef", "MethodDef"]),
}

SCHEMA = {
    "Module": "u2 Generation,S Name,G Mvid,G EncId,G EncBaseId",
    "TypeRef": "C:ResolutionScope ResolutionScope,S TypeName,S TypeNamespace",
    "TypeDef": "u4 Flags,S TypeName,S TypeNamespace,C:TypeDefOrRef Extends,T:Field FieldList,T:MethodDef MethodList",
    "FieldPtr": "T:Field Field",
    "Field": "u2 Flags,S Name,B Signature",
    "MethodPtr": "T:MethodDef Method",
    "MethodDef": "u4 RVA,u2 ImplFlags,u2 Flags,S Name,B Signature,T:Param ParamList",
    "ParamPtr": "T:Param Param",
    "Param": "u2 Flags,u2 Sequence,S Name",
    "InterfaceImpl": "T:TypeDef Class,C:TypeDefOrRef Interface",
    "MemberRef": "C:MemberRefParent Class,S Name,B Signature",
    "Constant": "u1 Type,u1 Padding,C:HasConstant Parent,B Value",
    "CustomAttribute": "C:HasCustomAttribute Parent,C:CustomAttributeType Type,B Value",
    "FieldMarshal": "C:HasFieldMarshal Parent,B NativeType",
    "DeclSecurity": "u2 Action,C:HasDeclSecurity Parent,B PermissionSet",
    "ClassLayout": "u2 PackingSize,u4 ClassSize,T:TypeDef Parent",
    "FieldLayout": "u4 Offset,T:Field Field",
    "StandAloneSig": "B Signature",
    "EventMap": "T:TypeDef Parent,T:Event EventList",
    "EventPtr": "T:Event Event",
    "Event": "u2 EventFlags,S Name,C:TypeDefOrRef EventType",
    "PropertyMap": "T:TypeDef Parent,T:Property PropertyList",
    "PropertyPtr": "T:Property Property",
    "Property": "u2 Flags,S Name,B Type",
    "MethodSemantics": "u2 Semantics,T:MethodDef Method,C:HasSemantics Association",
    "MethodImpl": "T:TypeDef Class,C:MethodDefOrRef MethodBody,C:MethodDefOrRef MethodDeclaration",
    "ModuleRef": "S Name",
    "TypeSpec": "B Signature",
    "ImplMap": "u2 MappingFlags,C:MemberForwarded MemberForwarded,S ImportName,T:ModuleRef ImportScope",
    "FieldRVA": "u4 RVA,T:Field Field",
    "EncLog": "u4 Token,u4 FuncCode",
    "EncMap": "u4 Token",
    "Assembly": "u4 HashAlgId,u2 MajorVersion,u2 MinorVersion,u2 BuildNumber,u2 RevisionNumber,u4 Flags,B PublicKey,S Name,S Culture",
    "AssemblyProcessor": "u4 Processor",
    "AssemblyOS": "u4 OSPlatformID,u4 OSMajorVersion,u4 OSMinorVersion",
    "AssemblyRef": "u2 MajorVersion,u2 MinorVersion,u2 BuildNumber,u2 RevisionNumber,u4 Flags,B PublicKeyOrToken,S Name,S Culture,B HashValue",
    "AssemblyRefProcessor": "u4 Processor,T:AssemblyRef AssemblyRef",
    "AssemblyRefOS": "u4 OSPlatformId,u4 OSMajorVersion,u4 OSMinorVersion,T:AssemblyRef AssemblyRef",
    "File": "u4 Flags,S Name,B HashValue",
    "ExportedType": "u4 Flags,u4 TypeDefId,S TypeName,S TypeNamespace,C:Implementation Implementation",
    "ManifestResource": "u4 Offset,u4 Flags,S Name,C:Implementation Implementation",
    "NestedClass": "T:TypeDef NestedClass,T:TypeDef EnclosingClass",
    "GenericParam": "u2 Number,u2 Flags,C:TypeOrMethodDef Owner,S Name",
    "MethodSpec": "C:MethodDefOrRef Method,B Instantiation",
    "GenericParamConstraint": "T:GenericParam Owner,C:TypeDefOrRef Constraint",
}


def read_rows(b, md, streams, tables_off):
    """Decode every row of every table: {table name: [ {column: value} ]}."""
    heaps = b[tables_off + 6]
    valid = struct.unpack_from("<Q", b, tables_off + 8)[0]
    counts = {}
    p = tables_off + 24
    for i in range(64):
        if valid >> i & 1:
            counts[TABLES[i]] = u32(b, p)
            p += 4
    if heaps & 0x40:            # extra data (#- streams written by EnC)
        p += 4
    sidx = 4 if heaps & 1 else 2
    gidx = 4 if heaps & 2 else 2
    bidx = 4 if heaps & 4 else 2

    def tsize(name):
        return 2 if counts.get(name, 0) < 0x10000 else 4

    def csize(kind):
        bits, targets = CODED[kind]
        most = max(counts.get(t, 0) for t in targets if t)
        return 2 if most < (1 << (16 - bits)) else 4

    strings = md + streams["#Strings"][0]
    blobs = md + streams["#Blob"][0]
    guids = md + streams["#GUID"][0] if "#GUID" in streams else None

    def string_at(i):
        e = b.index(b"\0", strings + i)
        return b[strings + i:e].decode("utf-8", "replace")

    def blob_at(i):
        p = blobs + i
        x = b[p]
        if x & 0x80 == 0:
            n, p = x, p + 1
        elif x & 0xC0 == 0x80:
            n, p = ((x & 0x3F) << 8) | b[p + 1], p + 2
        else:
            n, p = ((x & 0x1F) << 24) | (b[p + 1] << 16) | (b[p + 2] << 8) | b[p + 3], p + 4
        return b[p:p + n]

    out = {}
    for i in range(64):
        if not valid >> i & 1:
            continue
        name = TABLES[i]
        cols = []
        for spec in SCHEMA[name].split(","):
            kind, col = spec.split(" ")
            if kind == "u1":
                size = 1
            elif kind == "u2":
                size = 2
            elif kind == "u4":
                size = 4
            elif kind == "S":
                size = sidx
            elif kind == "G":
                size = gidx
            elif kind == "B":
                size = bidx
            elif kind.startswith("T:"):
                size = tsize(kind[2:])
            else:
                size = csize(kind[2:])
            cols.append((kind, col, size))
        rows = []
        for _ in range(counts[name]):
            row = {}
            for kind, col, size in cols:
                v = b[p] if size == 1 else (u16(b, p) if size == 2 else u32(b, p))
                p += size
                if kind == "S":
                    v = string_at(v)
                elif kind == "B":
                    v = blob_at(v)
                elif kind == "G":
                    v = guid_text(b[guids + 16 * (v - 1):guids + 16 * v]) if v and guids is not None else "nil"
                elif kind.startswith("C:"):
                    bits, targets = CODED[kind[2:]]
                    tag = v & ((1 << bits) - 1)
                    target = targets[tag] if tag < len(targets) else None
                    v = (target, v >> bits)
                elif kind.startswith("T:"):
                    v = (kind[2:], v)
                row[col] = v
            rows.append(row)
        out[name] = rows
    return out


def guid_text(g):
    a, b2, c = struct.unpack_from("<IHH", g, 0)
    return "{%08X-%04X-%04X-%s-%s}" % (a, b2, c, g[8:10].hex().upper(), g[10:16].hex().upper())


def show_value(v):
    if isinstance(v, (bytes, bytearray)):
        return "<" + " ".join("%02X" % x for x in v) + ">"
    if isinstance(v, tuple):
        target, idx = v
        if idx == 0:
            return "nil"
        if target is None:
            return "?%d" % idx
        return "%s[%d]=0x%02X%06X" % (target, idx, TABLES.index(target), idx)
    if isinstance(v, str):
        return v if v.startswith("{") or v == "nil" else repr(v)
    return "0x%X" % v



def summarize(path, dump=()):
    with open(path, "rb") as f:
        b = f.read()
    out = ["file: %s (%d bytes)" % (path, len(b))]
    if b[:4] == b"BSJB":
        md, md_size = 0, len(b)
        out.append("container: raw metadata")
    else:
        if b[:2] == b"MZ":
            kind, secs, cli_rva = pe_cli(b)
            base = 0
        else:
            base = 0
            if b[:4] == b"\0asm":
                desc, base, payload = wasm_payload(b)
                out.append(desc)
                b = payload
            kind, secs, cli_rva = webcil_cli(b)
        cli = map_rva(secs, cli_rva)
        md_rva, md_size = u32(b, cli + 8), u32(b, cli + 12)
        flags, entry = u32(b, cli + 16), u32(b, cli + 20)
        md = map_rva(secs, md_rva)
        out.append("container: %s, %d sections, CLI header RVA 0x%x, metadata RVA 0x%x size %d"
                   % (kind, len(secs), cli_rva, md_rva, md_size))
        out.append("CLI flags 0x%08x, entry point token 0x%08x" % (flags, entry))
        for i, (vsize, va, rawsize, rawptr) in enumerate(secs):
            out.append("  section %d: VirtualSize 0x%x VirtualAddress 0x%x SizeOfRawData 0x%x PointerToRawData 0x%x%s"
                       % (i, vsize, va, rawsize, rawptr,
                          " (file offset 0x%x)" % (rawptr + base) if base else ""))
    if b[md:md + 4] != b"BSJB":
        raise Bad("no BSJB at metadata offset")
    vlen = u32(b, md + 12)
    version = b[md + 16:md + 16 + vlen].split(b"\0")[0].decode("ascii", "replace")
    p = md + 16 + vlen
    nstreams = u16(b, p + 2)
    p += 4
    out.append("metadata version string: %s" % version)
    tables = None
    streams = {}
    for _ in range(nstreams):
        off, size = u32(b, p), u32(b, p + 4)
        e = b.index(b"\0", p + 8)
        name = b[p + 8:e].decode("ascii", "replace")
        p = p + 8 + ((e - (p + 8) + 4) & ~3)
        out.append("  stream %-8s offset 0x%04x size %d" % (name, off, size))
        streams.setdefault(name, (off, size))
        if name in ("#~", "#-"):
            tables = md + off
    if tables is None:
        raise Bad("no #~ or #- stream")
    major, minor, heaps = b[tables + 4], b[tables + 5], b[tables + 6]
    valid = struct.unpack_from("<Q", b, tables + 8)[0]
    sorted_mask = struct.unpack_from("<Q", b, tables + 16)[0]
    out.append("tables %d.%d, HeapSizes 0x%02x, Valid 0x%016x, Sorted 0x%016x"
               % (major, minor, heaps, valid, sorted_mask))
    p = tables + 24
    total = 0
    for i in range(64):
        if valid >> i & 1:
            rows = u32(b, p)
            p += 4
            total += rows
            name = TABLES[i] if i < len(TABLES) else "0x%02X" % i
            out.append("  0x%02X %-24s %6d" % (i, name, rows))
    out.append("  total rows %d" % total)
    if dump:
        rows = read_rows(b, md, streams, tables)
        for name in dump:
            for i, row in enumerate(rows.get(name, []), 1):
                out.append("%s[%d] 0x%02X%06X %s" % (
                    name, i, TABLES.index(name), i,
                    " ".join("%s=%s" % (k, show_value(v)) for k, v in row.items())))
    return "\n".join(out)


def main(argv):
    status = 0
    args = argv[1:]
    dump = ()
    if len(args) >= 2 and args[0] == "--rows":
        dump = TABLES[:0x2D] if args[1] == "all" else args[1].split(",")
        for name in dump:
            if name not in SCHEMA:
                print("unknown table %s" % name)
                return 2
        args = args[2:]
    for path in args:
        try:
            print(summarize(path, dump))
        except (Bad, IndexError, struct.error, ValueError, OSError) as e:
            print("%s: error: %s" % (path, e))
            status = 1
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))

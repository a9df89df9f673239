#!/usr/bin/env python3
"""Make an ilasm-built PE reproducible by fixing its two random fields.

Usage: normalize-pe.py FILE...   (rewrites each FILE in place)

Mono's ilasm writes the current time into the COFF header's TimeDateStamp
and a fresh random GUID into the Module table's Mvid. This script sets
TimeDateStamp to 0 and replaces the Mvid with a GUID derived from the
file's own bytes (MD5 of the file with both fields zeroed, formatted as a
version-4 style GUID), so two builds of the same source give the same bytes.

Do not run it on a strong-name signed file: the signature covers the Mvid.
It refuses files whose CLI header has the StrongNameSigned flag, and files
with a non-zero PE CheckSum (it would have to be recomputed).
"""
import hashlib
import struct
import sys


def u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def fail(msg):
    sys.stderr.write("normalize-pe: %s\n" % msg)
    sys.exit(1)


def locate(b):
    """Return (timestamp offset, mvid offset) for a PE32/PE32+ image."""
    lfanew = u32(b, 0x3C)
    if b[lfanew:lfanew + 4] != b"PE\0\0":
        fail("no PE signature")
    coff = lfanew + 4
    nsec, optsize = u16(b, coff + 2), u16(b, coff + 16)
    opt = coff + 20
    magic = u16(b, opt)
    if u32(b, opt + 64) != 0:
        fail("PE CheckSum is set; refusing to edit")
    dirs = opt + (96 if magic == 0x10B else 112)
    secs = [struct.unpack_from("<IIII", b, opt + optsize + 40 * i + 8) for i in range(nsec)]

    def off(rva):
        for _vsize, va, rawsize, rawptr in secs:
            if va <= rva < va + rawsize:
                return rawptr + rva - va
        fail("RVA 0x%x in no section" % rva)

    cli = off(u32(b, dirs + 8 * 14))
    if u32(b, cli + 16) & 0x8:
        fail("image is strong-name signed; refusing to edit")
    md = off(u32(b, cli + 8))
    vlen = u32(b, md + 12)
    p = md + 16 + vlen
    nstreams = u16(b, p + 2)
    p += 4
    streams = {}
    for _ in range(nstreams):
        so, size = u32(b, p), u32(b, p + 4)
        e = b.index(b"\0", p + 8)
        streams[b[p + 8:e].decode("ascii")] = md + so
        p = p + 8 + ((e - (p + 8) + 4) & ~3)
    t = streams.get("#~") or streams.get("#-")
    heaps = b[t + 6]
    valid = struct.unpack_from("<Q", b, t + 8)[0]
    if not valid & 1:
        fail("no Module table")
    rows = t + 24 + 4 * bin(valid).count("1") + (4 if heaps & 0x40 else 0)
    sidx = 4 if heaps & 1 else 2
    gidx = 4 if heaps & 2 else 2
    mvid_col = rows + 2 + sidx
    mvid = u32(b, mvid_col) if gidx == 4 else u16(b, mvid_col)
    if mvid == 0:
        fail("Module row has no Mvid")
    return coff + 4, streams["#GUID"] + 16 * (mvid - 1)


def normalize(path):
    with open(path, "rb") as f:
        b = bytearray(f.read())
    stamp, mvid = locate(b)
    b[stamp:stamp + 4] = b"\0\0\0\0"
    b[mvid:mvid + 16] = b"\0" * 16
    g = bytearray(hashlib.md5(bytes(b)).digest())
    g[7] = (g[7] & 0x0F) | 0x40     # version 4 (in the .NET byte order)
    g[8] = (g[8] & 0x3F) | 0x80     # RFC 4122 variant
    b[mvid:mvid + 16] = g
    with open(path, "wb") as f:
        f.write(b)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        fail("usage: normalize-pe.py FILE...")
    for a in sys.argv[1:]:
        normalize(a)

#!/usr/bin/env python3
"""Copy the ECMA-335 metadata of a PE file into a file of its own.

Usage: extract-metadata.py INPUT.dll OUTPUT.md

The output holds exactly the bytes that the CLI header's MetaData directory
(ECMA-335 II.25.3.3) points at: it starts with the metadata root signature
"BSJB" and is MetaData.Size bytes long. Only the standard library is used.
"""
import struct
import sys


def fail(msg):
    sys.stderr.write("extract-metadata: %s\n" % msg)
    sys.exit(1)


def read_pe(data):
    """Return (sections, data_directories) of a PE32 or PE32+ image."""
    if data[:2] != b"MZ":
        fail("no MZ signature")
    (e_lfanew,) = struct.unpack_from("<I", data, 0x3C)
    if data[e_lfanew:e_lfanew + 4] != b"PE\0\0":
        fail("no PE signature at 0x%x" % e_lfanew)
    coff = e_lfanew + 4
    (_machine, nsections, _stamp, _symptr, _nsyms, opt_size, _chars) = \
        struct.unpack_from("<HHIIIHH", data, coff)
    opt = coff + 20
    (magic,) = struct.unpack_from("<H", data, opt)
    if magic == 0x10B:          # PE32
        ndirs_off, dirs_off = 92, 96
    elif magic == 0x20B:        # PE32+
        ndirs_off, dirs_off = 108, 112
    else:
        fail("unknown optional header magic 0x%x" % magic)
    (ndirs,) = struct.unpack_from("<I", data, opt + ndirs_off)
    dirs = [struct.unpack_from("<II", data, opt + dirs_off + 8 * i)
            for i in range(min(ndirs, 16))]
    sections = []
    sh = opt + opt_size
    for i in range(nsections):
        name, vsize, va, rawsize, rawptr = struct.unpack_from("<8sIIII", data, sh + 40 * i)
        sections.append((name.rstrip(b"\0").decode("ascii", "replace"), vsize, va, rawsize, rawptr))
    return sections, dirs


def rva_to_offset(sections, rva):
    for _name, vsize, va, rawsize, rawptr in sections:
        if va <= rva < va + max(vsize, rawsize):
            if rva - va >= rawsize:
                fail("RVA 0x%x lies in the uninitialised tail of a section" % rva)
            return rawptr + (rva - va)
    fail("RVA 0x%x is in no section" % rva)


def main(argv):
    if len(argv) != 3:
        fail("usage: extract-metadata.py INPUT OUTPUT")
    with open(argv[1], "rb") as f:
        data = f.read()
    sections, dirs = read_pe(data)
    if len(dirs) < 15 or dirs[14][0] == 0:
        fail("%s has no CLI header (data directory 14)" % argv[1])
    cli = rva_to_offset(sections, dirs[14][0])
    (_cb, _major, _minor, md_rva, md_size) = struct.unpack_from("<IHHII", data, cli)
    start = rva_to_offset(sections, md_rva)
    blob = data[start:start + md_size]
    if len(blob) != md_size:
        fail("metadata runs past the end of the file")
    if blob[:4] != b"BSJB":
        fail("metadata does not start with BSJB")
    with open(argv[2], "wb") as f:
        f.write(blob)


if __name__ == "__main__":
    main(sys.argv)

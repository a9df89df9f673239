#!/usr/bin/env python3
"""Write the seed corpus of fuzz_bundle (tests/fuzz/corpus/bundle/): small
single-file bundles laid out as .NET's bundler lays them out (a host
holding the header's offset before the bundle signature, the files, the
header, the manifest), of major versions 1, 2 and 6, holding
data/corpus/asmresolver/HelloWorld.exe stored as is and (version 6)
deflated, and a JSON file; and a host that carries no bundle.

    tests/fuzz/make-bundle-seeds.py   (from the source tree's top)
"""
import os
import struct
import zlib

SIG = bytes.fromhex("8b1202b96a612038727b930214d7a03213f5b9e6efae3318ee3b2dce24b36aae")
top = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
out = os.path.join(top, "tests", "fuzz", "corpus", "bundle")
pe = open(os.path.join(top, "data", "corpus", "asmresolver", "HelloWorld.exe"), "rb").read()
json = b'{"runtimeOptions":{}}'


def s7(text):
    """BinaryWriter's string: the length in 7-bit groups, then UTF-8."""
    b = text.encode()
    n, o = len(b), bytearray()
    while True:
        c = n & 0x7F
        n >>= 7
        o.append(c | (0x80 if n else 0))
        if not n:
            return bytes(o) + b


def bundle(major, header_at_zero=False):
    # an ELF's magic: a host is an executable (the library checks)
    host = b"\x7fELF" + bytes((i * 37 + 11) & 0xFF for i in range(4, 100))
    body = bytearray(host + b"\0" * 8 + SIG + b"host code")
    files = []
    at = len(body)
    body += pe
    files.append((at, len(pe), 0, 1, "app/App.dll"))
    if major >= 6:
        z = zlib.compressobj(9, zlib.DEFLATED, -15)
        packed = z.compress(pe) + z.flush()
        at = len(body)
        body += packed
        files.append((at, len(pe), len(packed), 1, "Lib.dll"))
    at_json = len(body)
    body += json
    files.append((at_json, len(json), 0, 4, "App.runtimeconfig.json"))
    header = len(body)
    body += struct.pack("<IIi", major, 0, len(files)) + s7("AbCdEf123456")
    if major >= 2:
        body += struct.pack("<qqqqQ", 0, 0, at_json, len(json), 0)
    for off, size, comp, kind, path in files:
        body += struct.pack("<qq", off, size)
        if major >= 6:
            body += struct.pack("<q", comp)
        body += bytes([kind]) + s7(path)
    if not header_at_zero:
        body[100:108] = struct.pack("<Q", header)
    return bytes(body)


os.makedirs(out, exist_ok=True)
for name, data in (("v1", bundle(1)), ("v2", bundle(2)), ("v6", bundle(6)),
                   ("no-bundle", bundle(6, header_at_zero=True))):
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)

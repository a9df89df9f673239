#!/usr/bin/env python3
"""Convert a PE/CLI image into Webcil test fixtures.

Usage:
  webcil-pack.py v0      IN.dll OUT.webcil   bare Webcil payload, version 0.0
  webcil-pack.py v1      IN.dll OUT.webcil   bare Webcil payload, version 1.0
  webcil-pack.py wasm    IN.dll OUT.wasm     wrapper version 0 around a v0 payload
  webcil-pack.py wasm-v1 IN.dll OUT.wasm     wrapper version 1 around a v1 payload

Written for mdtools from the format description in dotnet/runtime,
docs/design/mono/webcil.md. The exact layout produced here, field by field,
is documented in data/webcil/README.md; keep the two in step. Only the
standard library is used, and the output depends only on the input bytes.
"""
import struct
import sys

# ---------------------------------------------------------------- PE input


def fail(msg):
    sys.stderr.write("webcil-pack: %s\n" % msg)
    sys.exit(1)


def read_pe(data):
    """Return (sections, cli_dir, debug_dir, reloc_index) of a PE image.

    sections: list of dicts with name, vsize, va, rawsize, rawptr (PE order).
    reloc_index: 1-based index of the section holding the base relocation
    directory (data directory 5), or 0 if there is none.
    """
    if data[:2] != b"MZ":
        fail("input has no MZ signature")
    (lfanew,) = struct.unpack_from("<I", data, 0x3C)
    if data[lfanew:lfanew + 4] != b"PE\0\0":
        fail("input has no PE signature")
    coff = lfanew + 4
    nsec, = struct.unpack_from("<H", data, coff + 2)
    optsize, = struct.unpack_from("<H", data, coff + 16)
    opt = coff + 20
    magic, = struct.unpack_from("<H", data, opt)
    dirs = opt + {0x10B: 96, 0x20B: 112}.get(magic, 0)
    if dirs == opt:
        fail("unknown optional header magic 0x%x" % magic)
    reloc_dir = struct.unpack_from("<II", data, dirs + 8 * 5)
    debug_dir = struct.unpack_from("<II", data, dirs + 8 * 6)
    cli_dir = struct.unpack_from("<II", data, dirs + 8 * 14)
    if cli_dir[0] == 0:
        fail("input has no CLI header")
    sections = []
    for i in range(nsec):
        name, vsize, va, rawsize, rawptr = struct.unpack_from(
            "<8sIIII", data, opt + optsize + 40 * i)
        sections.append(dict(name=name.rstrip(b"\0"), vsize=vsize, va=va,
                             rawsize=rawsize, rawptr=rawptr))
    reloc_index = 0
    if reloc_dir[0]:
        for i, s in enumerate(sections):
            if s["va"] <= reloc_dir[0] < s["va"] + max(s["vsize"], s["rawsize"]):
                reloc_index = i + 1
    return sections, cli_dir, debug_dir, reloc_index


# ----------------------------------------------------------- Webcil payload

HEADER_SIZE = {0: 28, 1: 32}
SECTION_HEADER_SIZE = 16


def align(n, a):
    return (n + a - 1) & ~(a - 1)


def payload(data, major):
    """Build a Webcil payload of the given major version from PE bytes.

    Version 0: 28-byte header, Reserved0 = 0, section data packed right
    after the section table (as the version-0 text of webcil.md says).
    Version 1: 32-byte header (TableBase at offset 28, written as 0),
    Reserved0 = 1-based index of the section holding the PE base
    relocations (0 if none), each section's data at a 16-byte aligned
    offset (as the version-1 text of webcil.md says).
    """
    sections, cli_dir, debug_dir, reloc_index = read_pe(data)
    hsize = HEADER_SIZE[major]
    pos = hsize + SECTION_HEADER_SIZE * len(sections)
    placed = []
    for s in sections:
        if major >= 1:
            pos = align(pos, 16)
        placed.append(pos)
        pos += s["rawsize"]
    out = bytearray(pos)
    reserved0 = reloc_index if major >= 1 else 0
    struct.pack_into("<4sHHHHIIII", out, 0, b"WbIL", major, 0, len(sections),
                     reserved0, cli_dir[0], cli_dir[1], debug_dir[0], debug_dir[1])
    if major >= 1:
        struct.pack_into("<I", out, 28, 0)          # TableBase, filled at run time
    for i, s in enumerate(sections):
        struct.pack_into("<IIII", out, hsize + SECTION_HEADER_SIZE * i,
                         s["vsize"], s["va"], s["rawsize"], placed[i])
        out[placed[i]:placed[i] + s["rawsize"]] = data[s["rawptr"]:s["rawptr"] + s["rawsize"]]
    if debug_dir[0] and debug_dir[1]:
        fix_debug_directory(out, sections, placed, debug_dir)
    return bytes(out)


def fix_debug_directory(out, sections, placed, debug_dir):
    """Debug directory entries hold a PE file offset (PointerToRawData at
    byte 24 of each 28-byte entry); rewrite it as a payload offset."""
    def payload_offset_of_rva(rva):
        for s, p in zip(sections, placed):
            if s["va"] <= rva < s["va"] + s["rawsize"]:
                return p + rva - s["va"]
        fail("debug directory RVA 0x%x is in no section" % rva)

    def translate(file_off):
        for s, p in zip(sections, placed):
            if s["rawptr"] <= file_off < s["rawptr"] + s["rawsize"]:
                return p + file_off - s["rawptr"]
        fail("debug data at file offset 0x%x is in no section" % file_off)

    start = payload_offset_of_rva(debug_dir[0])
    for e in range(start, start + debug_dir[1], 28):
        ptr, = struct.unpack_from("<I", out, e + 24)
        if ptr:
            struct.pack_into("<I", out, e + 24, translate(ptr))


# ------------------------------------------------------- WebAssembly wrapper


def uleb(n):
    b = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            b.append(byte | 0x80)
        else:
            b.append(byte)
            return bytes(b)


def name(s):
    s = s.encode("utf-8")
    return uleb(len(s)) + s


def vec(items):
    return uleb(len(items)) + b"".join(items)


def section(sid, body):
    return bytes([sid]) + uleb(len(body)) + body


I32 = 0x7F
FUNCTYPE = 0x60
END = b"\x0b"


def functype(params, results):
    return bytes([FUNCTYPE]) + vec([bytes([p]) for p in params]) + vec([bytes([r]) for r in results])


def code_body(instrs):
    body = b"\x00" + instrs + END            # no local declarations
    return uleb(len(body)) + body


def local_get(i):
    return b"\x20" + uleb(i)


def i32_const(v):
    # signed LEB128; only small non-negative constants are used here
    assert 0 <= v < 64
    return b"\x41" + bytes([v])


def memory_init(seg):
    return b"\xfc\x08" + uleb(seg) + b"\x00"


def data_section(prefix_len, seg0, body):
    """Encode the data section: two passive segments, seg0 then body.

    Zero bytes are appended to segment 0 until the payload (the content of
    segment 1) starts at a file offset that is a multiple of 4.
    """
    for pad in range(4):
        s0 = seg0 + b"\0" * pad
        segs = (uleb(2) +
                b"\x01" + uleb(len(s0)) + s0 +
                b"\x01" + uleb(len(body)))
        head = b"\x0b" + uleb(len(segs) + len(body))
        payload_at = prefix_len + len(head) + len(segs)
        if payload_at % 4 == 0:
            return head + segs + body, payload_at
    fail("cannot align the payload")


def wrap_v0(body):
    """Wrapper version 0: the WAT module shown first in webcil.md."""
    types = section(1, vec([functype([I32], []), functype([I32, I32], [])]))
    imports = section(2, vec([name("webcil") + name("memory") + b"\x02" + b"\x00" + uleb(1)]))
    funcs = section(3, vec([uleb(0), uleb(1)]))
    globals_ = section(6, vec([bytes([I32, 0x00]) + i32_const(0) + END]))
    exports = section(7, vec([name("webcilVersion") + b"\x03" + uleb(0),
                              name("getWebcilSize") + b"\x00" + uleb(0),
                              name("getWebcilPayload") + b"\x00" + uleb(1)]))
    datacount = section(12, uleb(2))
    code = section(10, vec([
        code_body(local_get(0) + i32_const(0) + i32_const(4) + memory_init(0)),
        code_body(local_get(0) + i32_const(0) + local_get(1) + memory_init(1)),
    ]))
    prefix = b"\0asm" + struct.pack("<I", 1) + types + imports + funcs + globals_ + exports + datacount + code
    data, _ = data_section(len(prefix), struct.pack("<I", len(body)), body)
    return prefix + data


def wrap_v1(body, table_size=1):
    """Wrapper version 1: the second WAT module of webcil.md (imports a
    table and the stackPointer/imageBase/tableBase globals, exports
    fillWebcilTable, getWebcilPayload stores tableBase at payload+28),
    followed by a 'name' custom section naming the functions."""
    types = section(1, vec([functype([I32], []),            # 0: getWebcilSize
                            functype([I32, I32], []),       # 1: getWebcilPayload
                            functype([], []),               # 2: fillWebcilTable
                            functype([I32], [I32])]))       # 3: table entry
    imports = section(2, vec([
        name("webcil") + name("memory") + b"\x02" + b"\x00" + uleb(1),
        name("webcil") + name("stackPointer") + b"\x03" + bytes([I32, 0x01]),
        name("webcil") + name("imageBase") + b"\x03" + bytes([I32, 0x00]),
        name("webcil") + name("tableBase") + b"\x03" + bytes([I32, 0x00]),
        name("webcil") + name("table") + b"\x01" + b"\x70" + b"\x00" + uleb(table_size),
    ]))
    funcs = section(3, vec([uleb(0), uleb(1), uleb(2), uleb(3)]))
    # global index space: 0 stackPointer, 1 imageBase, 2 tableBase (imports), 3 webcilVersion
    globals_ = section(6, vec([bytes([I32, 0x00]) + i32_const(1) + END]))
    exports = section(7, vec([name("webcilVersion") + b"\x03" + uleb(3),
                              name("getWebcilSize") + b"\x00" + uleb(0),
                              name("getWebcilPayload") + b"\x00" + uleb(1),
                              name("fillWebcilTable") + b"\x00" + uleb(2)]))
    # one passive element segment (flags 1, elemkind funcref 0x00) holding function 3
    elems = section(9, vec([b"\x01" + b"\x00" + vec([uleb(3)])]))
    datacount = section(12, uleb(2))
    get_payload = (local_get(0) + i32_const(0) + local_get(1) + memory_init(1) +
                   local_get(1) + i32_const(32) + b"\x4e" +           # i32.ge_s
                   b"\x04\x40" +                                      # if (no result)
                   local_get(0) + b"\x23" + uleb(2) +                 # global.get tableBase
                   b"\x36" + uleb(2) + uleb(28) +                     # i32.store align=4 offset=28
                   END)
    fill_table = (b"\x23" + uleb(2) + i32_const(0) + i32_const(table_size) +
                  b"\xfc\x0c" + uleb(0) + uleb(0))                    # table.init elem 0, table 0
    code = section(10, vec([
        code_body(local_get(0) + i32_const(0) + i32_const(4) + memory_init(0)),
        code_body(get_payload),
        code_body(fill_table),
        code_body(local_get(0)),
    ]))
    prefix = (b"\0asm" + struct.pack("<I", 1) + types + imports + funcs + globals_ +
              exports + elems + datacount + code)
    data, _ = data_section(len(prefix), struct.pack("<II", len(body), table_size), body)
    names = section(0, name("name") +
                    b"\x01" + uleb(len(vec([uleb(i) + name(n) for i, n in enumerate(
                        ["getWebcilSize", "getWebcilPayload", "fillWebcilTable", "webcilTableEntry0"])]))) +
                    vec([uleb(i) + name(n) for i, n in enumerate(
                        ["getWebcilSize", "getWebcilPayload", "fillWebcilTable", "webcilTableEntry0"])]))
    return prefix + data + names


def main(argv):
    if len(argv) != 4 or argv[1] not in ("v0", "v1", "wasm", "wasm-v1"):
        fail("usage: webcil-pack.py v0|v1|wasm|wasm-v1 IN OUT")
    with open(argv[2], "rb") as f:
        data = f.read()
    mode = argv[1]
    if mode == "v0":
        out = payload(data, 0)
    elif mode == "v1":
        out = payload(data, 1)
    elif mode == "wasm":
        out = wrap_v0(payload(data, 0))
    else:
        out = wrap_v1(payload(data, 1))
    with open(argv[3], "wb") as f:
        f.write(out)


if __name__ == "__main__":
    main(sys.argv)

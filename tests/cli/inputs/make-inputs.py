#!/usr/bin/env python3
"""Make the damaged inputs of mdinspect's golden tests from a corpus file.

Each input is data/corpus/asmresolver/HelloWorld.exe with a few bytes
patched; README.md says what is wrong with each and what mdinspect must do.
Every patch checks the bytes it replaces, so a changed source file fails
here instead of producing a different input. Run from the source top:

    python3 tests/cli/inputs/make-inputs.py
"""
import sys

SOURCE = "data/corpus/asmresolver/HelloWorld.exe"
OUT = "tests/cli/inputs/"

# name -> [(file offset, old bytes, new bytes)]
INPUTS = {
    # TypeDef row 2: TypeName #Strings index 0x016f -> 0xfff0 (the heap is
    # 0x1ec bytes); Extends TypeDefOrRef 0x0031 (TypeRef 12) -> 0x0033 (tag 3,
    # which TypeDefOrRef does not use).
    "bad-cells.exe": [
        (0x376, b"\x6f\x01", b"\xf0\xff"),
        (0x37A, b"\x31\x00", b"\x33\x00"),
    ],
    # Stream header of #~ (metadata root + 0x24): size 0x184 -> 0x135, so
    # CustomAttribute rows 5-10, the Assembly row and the AssemblyRef row lie
    # past the end of the stream.
    "cut-tables.exe": [
        (0x288, b"\x84\x01\x00\x00", b"\x35\x01\x00\x00"),
    ],
    # #~ row count of TypeRef (#~ + 28): 13 -> 0xFFFFFF. Indexes into
    # TypeRef widen, every later table moves past the end of the stream,
    # and TypeRef itself holds the 55 rows that fit.
    "huge-row-count.exe": [
        (0x2EC, b"\x0d\x00\x00\x00", b"\xff\xff\xff\x00"),
    ],
}


def main():
    data = open(SOURCE, "rb").read()
    for name, patches in INPUTS.items():
        b = bytearray(data)
        for off, old, new in patches:
            if b[off:off + len(old)] != old:
                sys.exit(f"{name}: expected {old.hex()} at {off:#x} in {SOURCE}")
            b[off:off + len(new)] = new
        with open(OUT + name, "wb") as f:
            f.write(b)


if __name__ == "__main__":
    main()

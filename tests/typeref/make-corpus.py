#!/usr/bin/env python3
"""Write the seed corpus of tests/typeref/fuzz_resolve.c: one file per
module set, each a sequence of records [u8 AppDomain tag][u32 LE length]
[bytes of one module] (length 0: a module without metadata).
Usage: make-corpus.py TOP_SRCDIR OUTDIR"""
import os
import struct
import sys

SETS = {
    "chain": ["data/resolve/chain/ChainClient.exe", "data/resolve/chain/Hop0.dll",
              "data/resolve/chain/Hop1.dll", "data/resolve/chain/Hop2.dll",
              "data/resolve/chain/Hop3.dll"],
    "cycle": ["data/resolve/cycle/CycleClient.exe", "data/resolve/cycle/CycA.dll",
              "data/resolve/cycle/CycB.dll", "data/resolve/cycle/Cyc3A.dll",
              "data/resolve/cycle/Cyc3B.dll", "data/resolve/cycle/Cyc3C.dll",
              "data/resolve/cycle/SelfFwd.dll"],
    "ver": ["data/resolve/ver/VerClient12.exe", "data/resolve/ver/VerClient30.exe",
            "data/resolve/ver/1.0/Ver.dll", "data/resolve/ver/2.0/Ver.dll",
            "data/resolve/ver/1.5k2/Ver.dll"],
    "multi": ["data/resolve/multi/MM.dll", "data/resolve/multi/MMPart.netmodule", None],
    "nest": ["data/resolve/nest/NestClient.exe", "data/resolve/nest/NestFwd.dll",
             "data/resolve/nest/NestReal.dll"],
    "nil": ["data/resolve/nil/NilClient.exe", "data/resolve/chain/Hop3.dll",
            "data/resolve/missing/GhostClient.exe", "data/resolve/missing/Ghosts.dll"],
    "fwd": ["data/fwd/Client.exe", "data/fwd/v2/Lib.dll", "data/fwd/Real.dll",
            "data/fwd/Final.dll"],
    "corpus-nested": ["data/corpus/asmresolver/ForwarderRefTest.exe",
                      "data/corpus/asmresolver/ForwarderLibrary.dll",
                      "data/corpus/asmresolver/ActualLibrary.dll"],
    "corpus-loop": ["data/corpus/asmresolver/HelloWorld_MaliciousExportedTypeLoop.exe",
                    "data/corpus/asmresolver/Assembly1_MaliciousExportedTypeLoop.dll",
                    "data/corpus/asmresolver/Assembly2_MaliciousExportedTypeLoop.dll"],
    "corpus-facade": ["data/corpus/asmresolver/DifferentNetVersion.MainApp.dll",
                      "data/corpus/asmresolver/DifferentNetVersion.Library.dll"],
    "corpus-multi": ["data/corpus/asmresolver/Manifest.exe",
                     "data/corpus/asmresolver/MyModel.netmodule"],
}


def main(top, out):
    os.makedirs(out, exist_ok=True)
    for name, files in SETS.items():
        blob = b""
        for i, f in enumerate(files):
            data = open(os.path.join(top, f), "rb").read() if f else b""
            tag = i % 2 if name == "ver" else 0
            blob += struct.pack("<BI", tag, len(data)) + data
        with open(os.path.join(out, name + ".set"), "wb") as fh:
            fh.write(blob)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])

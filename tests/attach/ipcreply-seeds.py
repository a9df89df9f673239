#!/usr/bin/env python3
"""Write the seed corpus of fuzz_ipcreply (tests/attach/corpus/ipcreply/):
replies a CoreCLR diagnostics server gives, and some it must not, each
behind the harness's first byte (even: an attach, odd: ProcessInfo). The
protocol: dotnet/diagnostics documentation/design-docs/ipc-protocol.md,
doc/attach.md. Run from anywhere; rewrites the files."""
import os
import struct

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "ipcreply")
MAGIC = b"DOTNET_IPC_V1\0"


def msg(payload, cset=0xFF, cid=0x00, size=None, magic=MAGIC):
    return magic + struct.pack("<HBBH", 20 + len(payload) if size is None else size, cset, cid, 0) + payload


def string(s, nul=True, count=None):
    units = s.encode("utf-16-le") + (b"\0\0" if nul else b"")
    return struct.pack("<I", len(units) // 2 if count is None else count) + units


def procinfo(version=2, cmd="/usr/share/dotnet/dotnet app.dll"):
    p = struct.pack("<Q", 4242) + bytes(range(16)) + string(cmd) + string("Linux") + string("x64")
    if version == 2:
        p += string("app") + string("10.0.12+abcdef")
    return p


ATTACH, INFO = b"\0", b"\1"
seeds = {
    "attach-ok": ATTACH + msg(struct.pack("<I", 0)),
    "attach-already-active": ATTACH + msg(struct.pack("<I", 0x8013136A), cid=0xFF),
    "attach-detaching": ATTACH + msg(struct.pack("<I", 0x80131367), cid=0xFF),
    "attach-unknown-command": ATTACH + msg(struct.pack("<I", 0x80131384), cid=0xFF),
    "attach-not-supported": ATTACH + msg(struct.pack("<I", 0x80131515), cid=0xFF),
    "attach-ok-with-failure": ATTACH + msg(struct.pack("<I", 0x80004005)),
    "attach-error-with-success": ATTACH + msg(struct.pack("<I", 0), cid=0xFF),
    "attach-short-payload": ATTACH + msg(b"\1\0"),
    "attach-size-below-header": ATTACH + msg(b"", size=12),
    "attach-size-beyond-data": ATTACH + msg(struct.pack("<I", 0), size=400),
    "attach-bad-magic": ATTACH + msg(struct.pack("<I", 0), magic=b"DOTNET_IPC_V2\0"),
    "attach-other-command-set": ATTACH + msg(struct.pack("<I", 0), cset=0x03, cid=0x01),
    "attach-header-cut": ATTACH + msg(struct.pack("<I", 0))[:11],
    "attach-nothing": ATTACH,
    "info2": INFO + msg(procinfo(2)),
    "info1-after-unknown": INFO + msg(struct.pack("<I", 0x80131384), cid=0xFF),
    "info2-error": INFO + msg(struct.pack("<I", 0x80004005), cid=0xFF),
    "info2-string-count-huge": INFO + msg(struct.pack("<Q", 1) + bytes(16) + string("x", count=0x7fffffff)),
    "info2-string-without-nul": INFO + msg(struct.pack("<Q", 1) + bytes(16) + string("abc", nul=False)),
    # a lone high surrogate in the command line (a, U+D800, b, NUL)
    "info2-surrogates": INFO + msg(struct.pack("<Q", 1) + bytes(16) + struct.pack("<I", 4) +
                                   b"a\0\x00\xd8b\0\0\0" + string("Linux") + string("x64") +
                                   string("e") + string("v")),
    "info2-long-cmdline": INFO + msg(procinfo(2, cmd="x" * 5000)),
    "info2-cut": INFO + msg(procinfo(2))[:60],
}
os.makedirs(out, exist_ok=True)
for name, data in seeds.items():
    with open(os.path.join(out, name), "wb") as f:
        f.write(data)
print("%d seeds in %s" % (len(seeds), out))

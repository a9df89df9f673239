#!/bin/sh
# Rebuilds tests/il/data/Opcodes.dll from Opcodes.il with Mono's ilasm
# (Debian mono-devel), then makes it reproducible (data/tools/normalize-pe.py:
# time stamp and MVID) and writes the one instruction ilasm has no syntax
# for: the `no.` prefix, as FE 19 01 over the three nops of
# Opcodes.All::NoPrefix (its tiny body is 1A 02 00 00 00 4A 2A).
#   tests/il/data/build.sh            rebuild in place
#   tests/il/data/build.sh --verify   rebuild into a scratch directory, compare
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
out=$here/Opcodes.dll
w=$(mktemp -d)
trap 'rm -rf "$w"' EXIT INT TERM
command -v ilasm >/dev/null || { echo "build.sh: ilasm not found (apt-get install mono-devel)" >&2; exit 1; }
(cd "$w" && ilasm /dll /quiet /output:Opcodes.dll "$here/Opcodes.il" >/dev/null)
python3 "$top/data/tools/normalize-pe.py" "$w/Opcodes.dll"
python3 - "$w/Opcodes.dll" <<'PY'
import sys
p = sys.argv[1]
b = open(p, 'rb').read()
old = bytes.fromhex('1a02000000' '4a2a')
if b.count(old) != 1:
    sys.exit('build.sh: NoPrefix body found %d times, want 1' % b.count(old))
open(p, 'wb').write(b.replace(old, bytes.fromhex('1a02fe1901' '4a2a')))
PY
# BadBodies.dll: Opcodes.dll with damaged bodies, for the error paths of
# `il` (tests/cli/cases/il-errors): the byte after NoPrefix's ldarg.0 is
# 0x24 (no instruction); Tiny's header byte is 0x00 (neither tiny nor fat);
# Base's br.s at IL_006c jumps back 128 bytes, before the code; the first
# exception clause of Handlers has kind 3; FatHandlers' byte at IL_0010,
# inside its first try block, is 0x24.
python3 - "$w/Opcodes.dll" "$w/BadBodies.dll" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
pe = struct.unpack_from('<I', b, 0x3C)[0]
nsec = struct.unpack_from('<H', b, pe + 6)[0]
opt = struct.unpack_from('<H', b, pe + 20)[0]
secs = [struct.unpack_from('<8sIIII', b, pe + 24 + opt + 40 * i) for i in range(nsec)]
def off(rva):
    for _, vsize, va, rsize, raw in secs:
        if va <= rva < va + max(vsize, rsize):
            return rva - va + raw
    sys.exit('build.sh: RVA 0x%x in no section' % rva)
def patch(rva, at, old, new):
    o = off(rva) + at
    if b[o] != old:
        sys.exit('build.sh: byte 0x%02x at RVA 0x%x+%d, want 0x%02x' % (b[o], rva, at, old))
    b[o] = new
patch(0x24e4, 2, 0xfe, 0x24)         # NoPrefix (tiny): IL_0001
patch(0x24ec, 0, 0x0e, 0x00)         # Tiny: the header
patch(0x2078, 12 + 0x6d, 0x00, 0x80) # Base (fat): br.s at IL_006c
patch(0x2314, 12 + 48 + 4, 0x00, 0x03) # Handlers: clause 0's flags
patch(0x2384, 12 + 0x10, 0x00, 0x24) # FatHandlers (fat): IL_0010
open(sys.argv[2], 'wb').write(b)
PY
if [ "${1:-}" = --verify ]; then
    cmp "$w/Opcodes.dll" "$out" && cmp "$w/BadBodies.dll" "$here/BadBodies.dll" &&
        echo "build.sh: Opcodes.dll and BadBodies.dll are reproducible"
else
    cp "$w/Opcodes.dll" "$out"
    cp "$w/BadBodies.dll" "$here/BadBodies.dll"
    echo "build.sh: wrote $out and BadBodies.dll"
fi

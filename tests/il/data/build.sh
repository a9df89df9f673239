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
if [ "${1:-}" = --verify ]; then
    cmp "$w/Opcodes.dll" "$out" && echo "build.sh: Opcodes.dll is reproducible"
else
    cp "$w/Opcodes.dll" "$out"
    echo "build.sh: wrote $out"
fi

#!/bin/sh
# Native time named (issue 24): the Workload's memmove mode copies large
# arrays, which the runtime hands to libc's memmove. Most samples must be
# there and named by libc's own symbol (`libc.so.6!__memmove_avx_...`),
# which libc keeps in its separate debug file (Debian's libc6-dbg, found
# by build-id under /usr/lib/debug): without it the test is skipped.
. "$MDT_TOP_SRCDIR/tests/profiler/common.sh"
libc=$(ldd "$(command -v dotnet)" 2>/dev/null | sed -n 's/.*libc\.so\.6 => \([^ ]*\).*/\1/p')
id=$(python3 - "$libc" <<'PY' 2>/dev/null
import struct, sys
d = open(sys.argv[1], "rb").read()
shoff, = struct.unpack_from("<Q", d, 0x28)
size, n = struct.unpack_from("<HH", d, 0x3a)
for i in range(n):
    typ, = struct.unpack_from("<I", d, shoff + i * size + 4)
    off, sz = struct.unpack_from("<QQ", d, shoff + i * size + 24)
    o = off
    while typ == 7 and o < off + sz:
        nsz, dsz, t = struct.unpack_from("<III", d, o)
        o += 12 + (nsz + 3) // 4 * 4
        if t == 3:
            print(d[o:o + dsz].hex())
        o += (dsz + 3) // 4 * 4
PY
)
[ -n "$id" ] || skip "cannot read the build-id of libc ($libc)"
dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
[ -r "$dbg" ] || skip "libc's debug symbols are not installed ($dbg: Debian's libc6-dbg)"
build_programs
log=$work/native-memmove.log
profile "$log" --debug-names -- dotnet "$workload" memmove "$work/native-memmove.expected" 1500 \
    >"$work/native-memmove.out" 2>&1 || { cat "$work/native-memmove.out" >&2; fail "the profiled run failed"; }
python3 "$top/tests/profiler/native.py" memmove "$log" "$work/native-memmove.expected" --assemblies "$work/bin/Workload"

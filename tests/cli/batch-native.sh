#!/bin/sh
# mdinspect batch: native frames (doc/profile-log.md, Frames) named from
# the ELF files of the log's #elf lines, on a small shared object built
# here with two functions, one exported and one static:
#  - its .symtab names both: `libt.so!alpha`, `[gc] libt.so!hidden`; an
#    offset no symbol covers stays `libt.so+0x...`; JSON frames keep
#    "status": "native" with module, build_id, offset, and name, symbol,
#    activity where they apply; text, --folded, --top and --speedscope use
#    the same names;
#  - stripped, its .dynsym names the exported one only; with --debug-dir
#    holding the unstripped file as .build-id/xx/rest.debug, both again;
#  - a file of another build at the #elf path: frames unnamed, one warning
#    naming both build-ids, "detail" in JSON;
#  - damaged files (truncated, garbage, section headers pointing past the
#    end, a huge section count) and paths that are no regular file (a
#    directory, a FIFO, /dev/zero) are refused without a crash or a hang;
#  - a frame before its #elf line, a frame without one, the vDSO, plain
#    `native` with and without an activity; malformed native frames are
#    bad frames (exit 1);
#  - the answers are the same with 1 and 4 threads on a long input.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-native.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-native.sh: python3 is needed" >&2; exit 77; }
cc=${CC:-cc}
command -v "$cc" >/dev/null 2>&1 || { echo "batch-native.sh: no C compiler to build the test object" >&2; exit 77; }
for t in objcopy strip; do
    command -v $t >/dev/null 2>&1 || { echo "batch-native.sh: $t (binutils) is needed" >&2; exit 77; }
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-native.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM

cat >"$tmp/t.c" <<'EOF'
static volatile int sink;
__attribute__((noinline)) static int hidden(int x)
{
    for (int i = 0; i < x; i++)
        sink += i * VARIANT;
    return sink;
}
int alpha(int x)
{
    return hidden(x) + 1;
}
EOF
# the sanitizer's flags stay out: this is data, not code under test
for v in 3 5; do
    env -u CFLAGS "$cc" -shared -fPIC -O1 -DVARIANT=$v -Wl,--build-id=sha1 -o "$tmp/libt$v.so" "$tmp/t.c" ||
        { echo "batch-native.sh: cannot build the test object" >&2; exit 99; }
done
mkdir -p "$tmp/lib" "$tmp/other" "$tmp/stripped"
cp "$tmp/libt3.so" "$tmp/lib/libt.so"
cp "$tmp/libt5.so" "$tmp/other/libt.so"
strip -s -o "$tmp/stripped/libt.so" "$tmp/libt3.so"

python3 - "$tmp" "$prog" <<'PY'
import json, os, random, stat, struct, subprocess, sys
tmp, prog = sys.argv[1], sys.argv[2]
from mdtcheck import check, done

def elf_info(path):
    """build-id and {name: (value, size)} of the .symtab (a small reader:
    the test's own, independent of the code under test)."""
    d = open(path, "rb").read()
    shoff, = struct.unpack_from("<Q", d, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
    secs = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
    syms, bid = {}, None
    for s in secs:
        if s[1] == 2:  # SHT_SYMTAB
            strs = secs[s[6]]
            for off in range(s[4], s[4] + s[5], 24):
                name, info, other, shndx, value, size = struct.unpack_from("<IBBHQQ", d, off)
                n = d[strs[4] + name:d.index(b"\0", strs[4] + name)].decode()
                if n:
                    syms[n] = (value, size)
        if s[1] == 7:  # SHT_NOTE
            o = s[4]
            while o < s[4] + s[5]:
                nsz, dsz, typ = struct.unpack_from("<III", d, o)
                o += 12 + (nsz + 3) // 4 * 4
                if typ == 3:
                    bid = d[o:o + dsz].hex()
                o += (dsz + 3) // 4 * 4
    return bid, syms

bid, syms = elf_info(os.path.join(tmp, "libt3.so"))
bid5, _ = elf_info(os.path.join(tmp, "libt5.so"))
check(bid and bid5 and bid != bid5 and "alpha" in syms and "hidden" in syms,
      "test objects: two builds with build-ids, alpha and hidden in .symtab")
A = syms["alpha"][0] + 2
H = syms["hidden"][0] + 3
# an offset after the last function, in no symbol
F = max(v + s for v, s in syms.values()) + 0x40

def frame(off, act=None, name="libt.so", b=None):
    return "native:%s:%s+0x%x%s" % (name, bid if b is None else b, off, "!" + act if act else "")

def run(lines, *args, fmt=None):
    inp = "".join(l + "\n" for l in lines).encode()
    cmd = [prog, "batch", "--no-progress"] + list(args) + ([fmt] if fmt else [])
    r = subprocess.run(cmd, input=inp, capture_output=True, timeout=120)
    st = r.returncode
    # most logs here have no #stats line: batch adds 4 to the status for
    # that (checked in batch-procs.sh); what is checked here is the rest
    if not any(l.startswith("#stats") for l in lines) and st >= 4 and st & 4:
        st &= ~4
    return st, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")

HDR = "#mdprofile 3 runtime=10.0.12 pid=1 mode=sample rate=1000 start=2026-01-01T00:00:00Z clock=cpu"
def elf(path, b=None, name="libt.so"):
    return "#elf %s:%s %s" % (name, bid if b is None else b, path.replace("%", "%25").replace(" ", "%20"))

lib = os.path.join(tmp, "lib", "libt.so")
rec = "stack 7 %s %s %s" % (frame(H, "gc"), frame(A, "gc"), frame(F))
log = [HDR, elf(lib), rec, "#stats samples=7"]

# --- .symtab names both ---------------------------------------------------
st, out, err = run(log)
want = "stack 7\t[gc] libt.so!hidden\t[gc] libt.so!alpha\tlibt.so+0x%x" % F
check(st == 0 and out.split("\n")[2] == want, "symtab: %r (status %d%s)" % (out.split("\n")[2:3], st, ", " + err.strip() if err.strip() else ""))
st, out, err = run(log, fmt="--json")
fr = json.loads(out.split("\n")[2])["frames"]
check(st == 0 and fr[0] == {"status": "native", "module": "libt.so", "build_id": bid, "offset": "0x%x" % H,
                            "name": "[gc] libt.so!hidden", "symbol": "hidden", "activity": "gc"},
      "json: a named frame with an activity: %s" % json.dumps(fr[0]))
check(fr[2] == {"status": "native", "module": "libt.so", "build_id": bid, "offset": "0x%x" % F},
      "json: an offset no symbol covers has no name: %s" % json.dumps(fr[2]))
st, out, err = run(log, fmt="--folded")
check(out == "libt.so+0x%x;[gc] libt.so!alpha;[gc] libt.so!hidden 7\n" % F, "folded: %r" % out)
st, out, err = run(log, "--top", "3")
check("[gc] libt.so!hidden" in out and "libt.so+0x%x" % F in out, "top: the same names")
st, out, err = run(log, fmt="--speedscope")
names = sorted(f["name"] for f in json.loads(out)["shared"]["frames"])
check(names == sorted(["[gc] libt.so!hidden", "[gc] libt.so!alpha", "libt.so+0x%x" % F]),
      "speedscope: the same names (%s)" % names)

# --- stripped: .dynsym, then the debug file by build-id --------------------
slog = [HDR, elf(os.path.join(tmp, "stripped", "libt.so")), rec]
st, out, err = run(slog)
check(out.split("\n")[2] == "stack 7\t[gc] libt.so+0x%x\t[gc] libt.so!alpha\tlibt.so+0x%x" % (H, F),
      "stripped: .dynsym names the exported function only: %r" % out.split("\n")[2])
dbg = os.path.join(tmp, "debug", ".build-id", bid[:2])
os.makedirs(dbg)
subprocess.run(["objcopy", "--only-keep-debug", os.path.join(tmp, "libt3.so"), os.path.join(dbg, bid[2:] + ".debug")], check=True)
st, out, err = run(slog, "--debug-dir", os.path.join(tmp, "nowhere"), "--debug-dir", os.path.join(tmp, "debug"))
check(out.split("\n")[2] == want, "stripped with --debug-dir: the debug file names both: %r" % out.split("\n")[2])
# no #elf line at all: the debug file alone
st, out, err = run([HDR, rec], "--debug-dir", os.path.join(tmp, "debug"))
check(out.split("\n")[1] == want, "no #elf line: the debug file by build-id: %r" % out.split("\n")[1])

# --- another build at the path -----------------------------------------------
mlog = [HDR, elf(os.path.join(tmp, "other", "libt.so")), rec, rec]
st, out, err = run(mlog)
check(st == 0 and out.split("\n")[2] == "stack 7\t[gc] libt.so+0x%x\t[gc] libt.so+0x%x\tlibt.so+0x%x" % (H, A, F),
      "another build: frames unnamed (%r)" % out.split("\n")[2])
check(err.count("another build") == 1 and bid in err and bid5 in err,
      "another build: said once, with both build-ids (%r)" % err.strip())
st, out, err = run(mlog, fmt="--json")
fr = json.loads(out.split("\n")[2])["frames"]
check("another build" in fr[0].get("detail", "") and "symbol" not in fr[0], "another build: JSON detail %r" % fr[0].get("detail"))

# --- damaged files and paths that are no regular file ----------------------------
good = open(os.path.join(tmp, "libt3.so"), "rb").read()
shoff, = struct.unpack_from("<Q", good, 0x28)
damaged = {
    "truncated": good[:len(good) // 3],
    "header-only": good[:64],
    "garbage": bytes(random.Random(1).getrandbits(8) for _ in range(len(good))),
    "shoff-past-end": good[:0x28] + struct.pack("<Q", len(good) * 16) + good[0x30:],
    "huge-shnum": good[:0x3c] + struct.pack("<H", 0xffff) + good[0x3e:],
    "symtab-size": None,
}
# a .symtab whose size runs past the end of the file
d = bytearray(good)
shentsize, shnum = struct.unpack_from("<HH", good, 0x3a)
for i in range(shnum):
    o = shoff + i * shentsize
    if struct.unpack_from("<I", good, o + 4)[0] == 2:
        struct.pack_into("<Q", d, o + 32, 1 << 40)
damaged["symtab-size"] = bytes(d)
rng = random.Random(7)
for k in range(20):  # random byte flips in the headers and tables
    d = bytearray(good)
    for _ in range(32):
        i = rng.choice([rng.randrange(64), rng.randrange(shoff, len(good)), rng.randrange(len(good))])
        d[i] = rng.getrandbits(8)
    damaged["flipped%d" % k] = bytes(d)
bad_lines = [HDR]
for name, data in damaged.items():
    p = os.path.join(tmp, "damaged-" + name + ".so")
    open(p, "wb").write(data)
    bad_lines += [elf(p, name=name), "stack 1 " + frame(A, name=name) + " " + frame(H, name=name)]
os.mkdir(os.path.join(tmp, "adir"))
os.mkfifo(os.path.join(tmp, "afifo"))
for name, p in (("dir", os.path.join(tmp, "adir")), ("fifo", os.path.join(tmp, "afifo")), ("zero", "/dev/zero"),
                ("missing", os.path.join(tmp, "missing.so"))):
    bad_lines += [elf(p, name=name), "stack 1 " + frame(A, name=name)]
st, out, err = run(bad_lines)
lines = out.split("\n")
check(st == 0 and len(lines) == len(bad_lines) + 1,
      "damaged files and odd paths: batch exits 0 with a line per input line (status %d, %d lines%s)"
      % (st, len(lines) - 1, ", " + err.strip()[-300:] if st else ""))
named_bad = [l for l in lines if "!" in l and "flipped" not in l]
check(not named_bad, "damaged files and odd paths: no frame named from them (%s)" % named_bad[:2])
check("afifo" in err and "adir" in err and "zero" in err and "missing" not in err,
      "odd paths: refused with a warning, a missing file without one")
# (a file cut after its notes still has the build-id: its frames stay
# unnamed without a word, as for a stripped file without .dynsym)
check(all(err.count("batch: %s: " % n) == 1 for n in ("garbage", "header-only")),
      "damaged files: said once each (%s)" % err.strip()[-900:])

# --- order, absence, the vDSO, plain native --------------------------------------
olog = [HDR, "stack 1 " + frame(A), elf(lib), "stack 1 " + frame(A), "stack 2 " + frame(0x9c0, name="[vdso]", b="ab" * 20),
        "stack 3 native", "stack 4 native!jit native", "stack 5 " + frame(A, "type-load")]
st, out, err = run(olog)
got = out.split("\n")[1:8]
check(got == ["stack 1\tlibt.so+0x%x" % A, "#elf libt.so:%s %s" % (bid, lib), "stack 1\tlibt.so!alpha",
              "stack 2\t[vdso]+0x9c0", "stack 3\t[native]", "stack 4\t[jit]\t[native]",
              "stack 5\t[type-load] libt.so!alpha"],
      "a frame before its #elf line stays unnamed, after it named; vDSO, plain native: %r" % got)
st, out, err = run(olog, fmt="--json")
fr = [json.loads(l)["frames"] for l in out.split("\n")[5:7]]
check(fr[0] == [{"status": "native"}] and fr[1] == [{"status": "native", "name": "[jit]", "activity": "jit"}, {"status": "native"}],
      "json: plain native frames: %s" % json.dumps(fr))
escaped = [HDR, "#elf lib%20t.so:" + bid + " " + lib, "stack 1 native:lib%20t.so:" + bid + "+0x%x" % A]
st, out, err = run(escaped, fmt="--json")
check(json.loads(out.split("\n")[2])["frames"][0].get("module") == "lib t.so", "a %XX-escaped name is decoded in JSON")

# --- malformed native frames --------------------------------------------------
for f in ("native:", "native:libt.so+0x10", "native:libt.so:zz+0x10", "native:libt.so:ab+0x", "native!GC",
          "native!", "native:libt.so:abc+0x10", "native::ab+0x10", "native:libt.so:ab+0x10!", "native:libt.so:ab+10",
          "native:libt.so:ab+0x11111111111111111"):
    st, out, err = run([HDR, "stack 1 " + f])
    check(st == 1 and "[unresolved: bad frame]" in out, "malformed %r is a bad frame (status %d)" % (f, st))

# --- threads ------------------------------------------------------------------
big = [HDR] + [elf(lib)] + [rec, "stack 1 " + frame(A + 1), "stack 2 " + frame(H, "jit")] * 20000
big.insert(30001, elf(os.path.join(tmp, "lib", "libt.so"), b="cd" * 20))
big += ["stack 1 " + frame(A, b="cd" * 20)]
outs = [run(big, "--threads", t)[1] for t in ("1", "4")]
check(outs[0] == outs[1] and outs[0].count("libt.so!hidden") == 40000, "1 and 4 threads: the same output")
done()
PY

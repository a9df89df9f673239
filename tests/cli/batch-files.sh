#!/bin/sh
# mdinspect batch never blocks on, nor reads whole, a file it has not
# checked (issue 25 item 3). Made here, in a scratch folder:
#  - `PATH TOKEN` lines naming a FIFO, a character device, a directory, a
#    2 GiB sparse file of zeros and a 2 GiB sparse file that starts with MZ:
#    each answered "unknown file" with why, within seconds, with a small
#    peak RSS (the whole run under 64 MiB);
#  - an --assemblies folder walked with -r holding a FIFO, a device and a
#    symlink loop named *.dll, a directory link back to its parent, a
#    2 GiB sparse *.dll, an unreadable *.dll (when not root), and a copy of
#    data/pdb/Lines.dll: the module is found by MVID, the run ends;
#  - --assemblies naming a FIFO itself: a warning, no block;
#  - --index naming a FIFO: a warning, the run goes on;
#  - the PDB beside a module a FIFO, or a 2 GiB sparse file that starts
#    like a portable PDB: the module resolves without source lines, fast.
# Every run has a 20 s timeout. Prints one line per check, "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
. "$top/tests/common/check.sh"
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "batch-files.sh: $prog is not built" >&2; exit 99; }
command -v python3 >/dev/null 2>&1 || { echo "batch-files.sh: python3 is needed" >&2; exit 77; }
command -v mkfifo >/dev/null 2>&1 || { echo "batch-files.sh: mkfifo is needed" >&2; exit 77; }
# RSS is measured of the program itself, not of libtool's wrapper script.
if [ -z "${MDINSPECT:-}" ] && [ -x "$build/mdinspect/.libs/mdinspect" ]; then
    prog=$build/mdinspect/.libs/mdinspect
    LD_LIBRARY_PATH=$build/libmdtools/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    export LD_LIBRARY_PATH
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-files.XXXXXX") || exit 99
trap 'chmod -R u+rwx "$tmp" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C
export LC_ALL

python3 - "$prog" "$tmp" "$top" <<'PY'
import os, shutil, subprocess, sys, time
prog, tmp, top = sys.argv[1:4]
from mdtcheck import check, done
# Sanitizer builds keep shadow memory: RSS is not the program's own.
RSS_MAX = (1 << 30) if os.environ.get("MDT_SANITIZED") else 64 << 20

def run(args, data):
    """(status, stdout, stderr, seconds, peak RSS in bytes); status None on a timeout"""
    start = time.monotonic()
    p = subprocess.Popen([prog, "batch", "--no-progress"] + args, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp, start_new_session=True)
    try:
        out, err = p.communicate(data.encode(), timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # the program too, not only the shell measuring it
        p.communicate()
        return None, "", "", 20.0, 0
    # the child is waited for already: its rusage is in RUSAGE_CHILDREN, the
    # maximum over children so far, so each check runs in a fresh shell
    return p.returncode, out.decode(), err.decode(), time.monotonic() - start, 0

def run_rss(args, data):
    """as run(), the peak RSS measured by a shell of its own (the only child)"""
    script = ("import resource, subprocess, sys\n"
              "p = subprocess.run(sys.argv[1:], stdin=sys.stdin, stdout=sys.stdout, "
              "stderr=sys.stderr)\n"
              "sys.stderr.write('\\nRSS %d\\n' % resource.getrusage(resource.RUSAGE_CHILDREN)"
              ".ru_maxrss)\n"
              "sys.exit(p.returncode)\n")
    start = time.monotonic()
    p = subprocess.Popen([sys.executable, "-c", script, prog, "batch", "--no-progress"] + args,
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         cwd=tmp, start_new_session=True)
    try:
        out, err = p.communicate(data.encode(), timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, 9)  # the program too, not only the shell measuring it
        p.communicate()
        return None, "", "", 20.0, 0
    err = err.decode()
    rss = 0
    if "\nRSS " in err:
        err, _, tail = err.rpartition("\nRSS ")
        rss = int(tail.split()[0]) * 1024
    return p.returncode, out.decode(), err, time.monotonic() - start, rss

def sparse(path, size, head=b""):
    with open(path, "wb") as f:
        f.write(head)
        f.truncate(size)

lines = os.path.join(top, "data/pdb/Lines.dll")
LINES_MVID = "c8e53984472d48f98a0624ad8d869103"
os.mkfifo(os.path.join(tmp, "fifo.dll"))
sparse(os.path.join(tmp, "zeros.dll"), 2 << 30)
sparse(os.path.join(tmp, "mz.dll"), 2 << 30, b"MZ")

# PATH TOKEN lines
cases = [("fifo.dll", "a FIFO, not a regular file"),
         ("/dev/null", "a character device, not a regular file"),
         (".", "a directory, not a regular file"),
         ("zeros.dll", "not a PE (MZ)"),
         ("mz.dll", "no PE signature")]
for path, want in cases:
    st, out, err, secs, rss = run_rss(["--json"], "%s 0x06000001\n" % path)
    ok = st == 1 and "unknown file" in out and want in out and secs < 10 and rss < RSS_MAX
    check(ok, "PATH line naming %s: %r in %.2f s, peak RSS %d KiB"
          % (path, out.strip()[:120], secs, rss >> 10))

# a folder walked with -r
walk = os.path.join(tmp, "walk")
os.makedirs(os.path.join(walk, "sub"))
os.mkfifo(os.path.join(walk, "fifo.dll"))
os.symlink("/dev/null", os.path.join(walk, "null.dll"))
os.symlink("loop.dll", os.path.join(walk, "loop.dll"))
os.symlink("..", os.path.join(walk, "sub", "up"))
sparse(os.path.join(walk, "sub", "zeros.dll"), 2 << 30)
shutil.copy(lines, os.path.join(walk, "sub", "Lines.dll"))
unreadable = os.path.join(walk, "unreadable.dll")
shutil.copy(lines, unreadable)
os.chmod(unreadable, 0)
st, out, err, secs, rss = run_rss(["-r", "-a", walk], "%s 0x06000001\n" % LINES_MVID)
check(st == 0 and out.startswith("Lines.") and secs < 10 and rss < RSS_MAX,
      "-r walk past a FIFO, a device, a link loop, a parent link, a 2 GiB file%s: %r in "
      "%.2f s, peak RSS %d KiB" % ("" if os.getuid() == 0 else ", an unreadable file",
                                    out.strip(), secs, rss >> 10))

# --assemblies naming a FIFO
st, out, err, secs, _ = run(["-a", "fifo.dll"], "%s 0x06000001\n" % LINES_MVID)
check(st == 1 and "cannot read fifo.dll" in err and "unknown MVID" in out,
      "-a naming a FIFO: warned (%r), not blocked" % err.strip().split("\n")[0])

# --index naming a FIFO
os.mkfifo(os.path.join(tmp, "index.fifo"))
st, out, err, secs, _ = run(["-a", walk, "-r", "--index", "index.fifo"],
                            "%s 0x06000001\n" % LINES_MVID)
check(st in (0, 1) and out.startswith("Lines.") and "index" in err,
      "--index naming a FIFO: warned (%r), resolved" % err.strip().split("\n")[0])

# --index naming a file over its 64 MiB bound (sparse: no disk used): the
# refusal says so, and the run goes on without it
with open(os.path.join(tmp, "index.huge"), "wb") as f:
    f.truncate((64 << 20) + 1)
st, out, err, secs, _ = run(["-a", walk, "-r", "--index", "index.huge"],
                            "%s 0x06000001\n" % LINES_MVID)
check(st in (0, 1) and out.startswith("Lines.") and "larger than 64 MiB" in err,
      "--index over its bound: refused (%r), resolved" % err.strip().split("\n")[0])

# the PDB beside a module: a FIFO, then a huge file that starts like a PDB
side = os.path.join(tmp, "side")
os.mkdir(side)
shutil.copy(lines, os.path.join(side, "Lines.dll"))
st, want, err, _, _ = run([], "side/Lines.dll 0x06000002\n")
shutil.copy(os.path.join(top, "data/pdb/Lines.pdb"), os.path.join(side, "Lines.pdb"))
st, with_pdb, err, _, _ = run([], "side/Lines.dll 0x06000002\n")
check(st == 0 and "Lines.cs:" in with_pdb and "Lines.cs" not in want,
      "the PDB beside a module gives its lines (%r, without it %r)"
      % (with_pdb.strip(), want.strip()))
for what, make in (("a FIFO", lambda p: os.mkfifo(p)),
                   ("a 2 GiB file starting with BSJB", lambda p: sparse(p, 2 << 30, b"BSJB"))):
    os.unlink(os.path.join(side, "Lines.pdb"))
    make(os.path.join(side, "Lines.pdb"))
    st, out, err, secs, rss = run_rss([], "side/Lines.dll 0x06000002\n")
    check(st == 0 and out == want and secs < 10 and rss < RSS_MAX,
          "the PDB beside a module is %s: %r in %.2f s, peak RSS %d KiB"
          % (what, out.strip(), secs, rss >> 10))

os.chmod(unreadable, 0o644)
done()
PY

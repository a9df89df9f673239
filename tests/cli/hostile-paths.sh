#!/bin/sh
# Paths that name what is not a file (issue 25): mdinspect must refuse
# them at once, never wait on them or loop. In a scratch folder: a FIFO
# named like an assembly, a symbolic link to /dev/null, a link cycle, a
# link back up to the folder (a directory loop), a multi-module assembly
# whose File table names a FIFO, an assembly with a FIFO named like its
# PDB beside it, a history file that is a FIFO, a script line of 3 MB.
# Each run has a time limit; a run that hits it fails its check.
# Prints one line per check and "N passed, M failed".
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
[ -x "$prog" ] || { echo "hostile-paths.sh: $prog is not built" >&2; exit 99; }
command -v mkfifo >/dev/null 2>&1 || { echo "hostile-paths.sh: skipped: no mkfifo"; exit 77; }
command -v timeout >/dev/null 2>&1 || { echo "hostile-paths.sh: skipped: no timeout"; exit 77; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-paths.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT INT TERM
LC_ALL=C
export LC_ALL

d=$tmp/dir
mkdir -p "$d/sub" "$tmp/multi" "$tmp/pdb"
cp "$top/data/sample/Hello.exe" "$d/Hello.exe"
mkfifo "$d/pipe.dll"
ln -s /dev/null "$d/null.dll"
ln -s cycle-b.dll "$d/cycle-a.dll"
ln -s cycle-a.dll "$d/cycle-b.dll"
ln -s .. "$d/sub/up"
ln -s . "$d/self"
cp "$top/data/resolve/multi/MM.dll" "$tmp/multi/MM.dll"
mkfifo "$tmp/multi/MMPart.netmodule"
cp "$top/data/pdb/Lines.dll" "$tmp/pdb/Lines.dll"
mkfifo "$tmp/pdb/Lines.pdb"
mkfifo "$tmp/history"

. "$top/tests/common/check.sh"
# check NAME WANT-STATUS WANT-TEXT COMMAND...: the command's output (stdout
# and stderr) must contain WANT-TEXT, its status be WANT-STATUS, within 20 s.
check() {
    name=$1 want=$2 text=$3
    shift 3
    out=$(timeout 20 "$@" 2>&1 </dev/null)
    rc=$?
    if [ "$rc" -eq 124 ]; then
        check_fail "$name: timed out (it waited on something)"
    elif [ "$rc" -ne "$want" ]; then
        check_fail "$name: exit $rc, want $want"
        printf '%s\n' "$out" | tail -n 5
    elif ! printf '%s\n' "$out" | grep -qF -- "$text"; then
        check_fail "$name: output lacks \"$text\":"
        printf '%s\n' "$out" | tail -n 5
    else
        check_pass "$name"
    fi
}

check "a FIFO named as a FILE" 1 "not a regular file (a FIFO)" "$prog" -c info "$d/pipe.dll"
check "a link to /dev/null named as a FILE" 1 "not a regular file" "$prog" -c info "$d/null.dll"
check "a link cycle named as a FILE" 1 "cycle-a.dll" "$prog" -c info "$d/cycle-a.dll"
check "the shell's open of a FIFO" 1 "not a regular file (a FIFO)" \
    "$prog" -c "open $d/pipe.dll" "$d/Hello.exe"
check "a folder with a FIFO, a device link, a link cycle and loops" 0 "Hello.exe" \
    "$prog" -c modules "$d"
check "the same, recursively (the loops are followed once)" 0 "Hello.exe" \
    "$prog" -r -c modules "$d"
check "open -r of the folder from the shell" 0 "opened #2 Hello.exe" \
    "$prog" -c "open -r $d; modules" "$top/data/sample/Hello.exe"
check "a glob over the folder" 1 "not a regular file (a FIFO)" "$prog" -c info "$d/*.dll"
check "a File table naming a FIFO" 1 "not a regular file (a FIFO)" \
    "$prog" -c modules "$tmp/multi/MM.dll"
# mdinspect batch's messages are its own; what matters here is that the
# library it opens files with does not wait on a FIFO.
check "a FIFO named like the PDB, from mdinspect batch" 0 "Lines.Calc::Loop" \
    sh -c "echo '$tmp/pdb/Lines.dll 0x06000002' | \"$prog\" batch"
check "a FIFO named as a PATH TOKEN line's path" 1 "unresolved" \
    sh -c "echo '$d/pipe.dll 0x02000001' | \"$prog\" batch"
head -c 3000000 /dev/zero | tr '\0' 'a' >"$tmp/long.mdi"
echo info >>"$tmp/long.mdi"
check "a script line of 3 MB (-f)" 2 "line longer than 1048576 bytes" \
    "$prog" -f "$tmp/long.mdi" "$d/Hello.exe"
check "a script line of 3 MB (standard input)" 1 "<stdin>:1: line longer than 1048576 bytes" \
    sh -c "\"$prog\" < \"$tmp/long.mdi\""
if command -v script >/dev/null 2>&1; then
    # The shell proper needs a terminal: script(1) gives it one, and types
    # `quit` into it once it is up.
    check "a history file that is a FIFO" 0 "is not a regular file: history is not kept" \
        sh -c "(sleep 1; echo quit) | MDINSPECT_HISTORY='$tmp/history' script -qec '$prog -i' /dev/null"
fi
check_done

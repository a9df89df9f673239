#!/bin/sh
# Set up a fresh Debian 12 machine (as root), build mdtools, then either run
# mdinspect on the bundled sample or run the whole test suite.
#   tools/quickstart.sh sample   install, build, mdinspect data/sample/Hello.exe
#   tools/quickstart.sh test     install, build, make check (plain, then
#                                ASan+UBSan), memcheck the unit tests and
#                                mdinspect, print "N passed, N failed"
set -eu
mode=${1:-test}
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

deps="build-essential autoconf automake libtool pkg-config libtalloc-dev libgmp-dev
      nettle-dev libreadline-dev libjansson-dev zlib1g-dev libxxhash-dev check python3
      libelf-dev libdw-dev libprotobuf-c-dev protobuf-c-compiler"
if [ "$mode" = test ]; then
    # Peers for differential tests and benchmarks, sanitizers, the terminal test,
    # clang-format for tools/check-format.sh, groff for doc/man3/check.sh (it renders and lints the library's pages);
    # libc's debug symbols for tests/profiler/memmove.sh (libc's memmove named);
    # Go for `go tool pprof`, which tests/cli/batch-pprof-go.sh reads --pprof with.
    deps="$deps mono-devel mono-utils libmono-2.0-dev libmono-cecil-cil-dev clang
          libclang-rt-14-dev clang-format valgrind tmux parallel groff-base libc6-dbg golang-go"
fi
missing=
for p in $deps; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "quickstart: run as root to install:$missing" >&2
        exit 2
    fi
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends $missing >/dev/null
fi

[ -x configure ] || autoreconf -fi >/dev/null
jobs=$(nproc 2>/dev/null || echo 2)

build() { # build DIR CFLAGS
    mkdir -p "$1"
    (cd "$1" && { [ -f Makefile ] || ../configure -q CFLAGS="$2" >/dev/null; } &&
        make -s -j"$jobs" >/dev/null)
}

case $mode in
sample)
    build build "-O2 -g"
    build/mdinspect/mdinspect data/sample/Hello.exe
    ;;
test)
    status=0
    build build "-O2 -g"
    (cd build && make -s -j"$jobs" check >/dev/null 2>&1) || status=1
    san="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all"
    build build-asan "$san"
    (cd build-asan && MDT_SANITIZED=1 ASAN_OPTIONS=detect_leaks=1 \
        make -s -j"$jobs" check >/dev/null 2>&1) || status=1
    for d in build build-asan; do
        for log in $(find "$d" -name '*.trs' | xargs grep -l 'test-result: \(FAIL\|ERROR\)' 2>/dev/null); do
            echo "== $d: ${log%.trs}.log"
            # A sanitizer's report first (its top frames say where; the tail
            # is only its legend), without the prefix MSBuild puts on the
            # lines of a compiler it ran.
            at=$(grep -n -m 1 'ERROR: AddressSanitizer\|ERROR: LeakSanitizer\|runtime error:\|WARNING: ThreadSanitizer' \
                "${log%.trs}.log" | cut -d: -f1)
            [ -n "$at" ] && sed -n "$at,$((at + 40))p" "${log%.trs}.log" | sed 's/^.*): error : //' | cut -c1-240
            tail -n 30 "${log%.trs}.log"
        done
    done
    echo "valgrind (memcheck) on the plain build:"
    tests/valgrind.sh build > build/valgrind.log 2>&1 || status=1
    grep -v '^ok ' build/valgrind.log
    echo "plain build:"; tests/summary.sh build || status=1
    echo "ASan+UBSan build:"; tests/summary.sh build-asan || status=1
    # The closing line CI reads: both builds and the valgrind pass together.
    p=0; f=0
    for counts in "$(tests/summary.sh build | tail -n 1)" "$(tests/summary.sh build-asan | tail -n 1)" \
        "$(tail -n 1 build/valgrind.log)"; do
        set -- $(echo "$counts" | tr -d ',' | awk '{print $1, $3}')
        p=$((p + ${1:-0})); f=$((f + ${2:-1}))
    done
    echo "$p passed, $f failed"
    exit $status
    ;;
*)
    echo "usage: $0 sample|test" >&2
    exit 2
    ;;
esac

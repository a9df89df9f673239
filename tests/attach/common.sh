# Shared by tests/attach/run-*.sh (sourced, POSIX sh). Sets $top, $build,
# $client (ipcclient), $tmp (scratch under the build tree, not /tmp: a
# target in its own mount namespace must see it), and provides:
#   need_dotnet            exit 77 with the reason when dotnet is absent
#   build_waiter           build data/attach/Waiter into $tmp/waiter/out
#   build_testprof         compile tests/attach/testprof.c into $tmp/testprof.so
#   start_waiter NAME CMD...  run CMD (ending in the Waiter) in the background,
#                          wait for "ready"; sets NAME_pid (the pid it
#                          printed), NAME_bg and NAME_out (its output file)
#   check NAME CMD...      run a check; counts and prints PASS/FAIL
#   finish                 print "N passed, M failed" and exit accordingly
# Every background process started here is killed (by pid) at exit.
top=$(cd "${MDT_TOP_SRCDIR:-.}" && pwd)
build=$(cd "${MDT_BUILDDIR:-.}" && pwd)
client="$build/tests/attach/ipcclient"
testprof_clsid='{8B2C0D4E-5A61-4F7B-9C3D-2E1F0A9B8C7D}'
. "$top/tests/common/check.sh"
started=
started_kill= # killed with SIGKILL: a PID namespace's init ignores SIGTERM
tmp=$(mktemp -d "$build/tests/attach/scratch.XXXXXX") || exit 1
chmod 755 "$tmp"

cleanup() {
    for p in $started_kill; do
        kill -KILL "$p" 2>/dev/null
    done
    for p in $started; do
        kill -CONT "$p" 2>/dev/null
        kill "$p" 2>/dev/null
    done
    for p in $started; do
        wait "$p" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

need_dotnet() {
    if ! command -v dotnet >/dev/null 2>&1; then
        echo "dotnet not found on PATH: the attach tests need a .NET SDK (skipped)" >&2
        exit 77
    fi
}

build_waiter() {
    sdk=$(dotnet --version 2>/dev/null)
    major=${sdk%%.*}
    cp -r "$top/data/attach/Waiter" "$tmp/waiter"
    chmod -R u+w "$tmp/waiter"
    if ! dotnet build "$tmp/waiter/Waiter.csproj" -nologo -v q -nodeReuse:false \
        -p:UseSharedCompilation=false -p:TargetFramework="net$major.0" -o "$tmp/waiter/out" \
        > "$tmp/waiter-build.log" 2>&1; then
        cat "$tmp/waiter-build.log"
        check_fail "dotnet build of data/attach/Waiter (SDK $sdk)"
        check_done
    fi
    waiter="$tmp/waiter/out/Waiter.dll"
    chmod -R a+rX "$tmp/waiter"
}

# Built here rather than by make: the ASan build's CFLAGS would make a
# shared object the runtime (not ASan-instrumented) cannot load.
build_testprof() {
    if ! ${CC:-cc} -shared -fPIC -Wl,-z,defs -O1 -g -Wall -Wextra -Werror -fvisibility=hidden \
        -o "$tmp/testprof.so" "$top/tests/attach/testprof.c" 2> "$tmp/testprof.log"; then
        cat "$tmp/testprof.log"
        check_fail "tests/attach/testprof.c compiles"
        check_done
    fi
    chmod a+rx "$tmp/testprof.so"
}

# start_waiter NAME CMD... : NAME_pid is the pid the program printed (its
# pid in its own PID namespace: run-container.sh finds the host pid),
# NAME_bg the background job's pid. Both are killed at exit.
start_waiter() {
    name=$1
    shift
    out="$tmp/$name.out"
    "$@" > "$out" 2>&1 &
    bg=$!
    started="$started $bg"
    i=0
    while ! grep -q '^ready' "$out" 2>/dev/null; do
        i=$((i + 1))
        if [ $i -gt 300 ] || ! kill -0 "$bg" 2>/dev/null; then
            cat "$out"
            check_fail "$name becomes ready"
            check_done
        fi
        sleep 0.1
    done
    printed=$(sed -n 's/^pid //p' "$out")
    # Only a pid of ours: in a PID namespace the printed pid names another
    # process here (pid 1 is init).
    if [ "$printed" != "$bg" ] && tr '\0' ' ' < "/proc/$printed/cmdline" 2>/dev/null |
        grep -q "Waiter.dll"; then
        started="$started $printed"
    fi
    eval "${name}_pid=$printed"
    eval "${name}_bg=$bg"
    eval "${name}_out=$out"
}

# Wait until `ipcclient find PID` succeeds (the runtime binds its socket
# early in startup, before Main; this guards against a slow start).
wait_socket() {
    i=0
    until "$client" find "$1" > /dev/null 2>&1; do
        i=$((i + 1))
        [ $i -gt 100 ] && return 1
        sleep 0.1
    done
}

check() {
    name=$1
    shift
    if "$@" > "$tmp/check.log" 2>&1; then
        check_pass "$name"
    else
        check_fail "$name"
        sed 's/^/    /' "$tmp/check.log"
    fi
}

# Helpers for checks: run ipcclient, keep stdout and stderr apart.
run_client() {
    "$@" > "$tmp/client.out" 2> "$tmp/client.err"
    echo $? > "$tmp/client.rc"
    echo "--- $*"
    cat "$tmp/client.out" "$tmp/client.err"
}
field() { sed -n "s/^$1: //p" "$tmp/client.out"; }
result() { sed -n 's/^result: //p' "$tmp/client.out"; }
stderr_has() { grep -q -- "$1" "$tmp/client.err" || { echo "stderr lacks: $1"; return 1; }; }
expect() { [ "$1" = "$2" ] || { echo "expected '$2', got '$1'"; return 1; }; }

finish() { check_done; }

#!/bin/sh
# The attach client across users (needs root to run a side as nobody with
# setpriv; exit 77 with the reason otherwise, and without dotnet):
#  - a client running as nobody against root's process: "permission
#    denied" naming the socket's owner and the caller's uid (the runtime
#    binds its socket with mode 0600), for info and attach alike;
#  - the same client without the target's TMPDIR: it cannot read the
#    target's environment and says so;
#  - a socket of the right name owned by another user than the process is
#    not used (it could be an impostor's);
#  - root reaches a process of nobody (root passes the socket's mode).
. "${MDT_TOP_SRCDIR:-.}/tests/attach/common.sh"
need_dotnet
if [ "$(id -u)" -ne 0 ]; then
    echo "not root: cannot run a target or client as another user (skipped)" >&2
    exit 77
fi
if ! command -v setpriv >/dev/null 2>&1; then
    echo "setpriv (util-linux) not found (skipped)" >&2
    exit 77
fi
nobody=$(id -u nobody 2>/dev/null) || {
    echo "no user nobody (skipped)" >&2
    exit 77
}
as_nobody="setpriv --reuid=$nobody --regid=$(id -g nobody) --clear-groups"
if ! $as_nobody test -x "$client"; then
    echo "nobody cannot execute $client (a parent directory is not searchable; skipped)" >&2
    exit 77
fi
build_waiter
build_testprof

mkdir -m 755 "$tmp/t1"
start_waiter w1 env TMPDIR="$tmp/t1" dotnet "$waiter"
wait_socket "$w1_pid"

nobody_is_denied_info() {
    run_client $as_nobody env TMPDIR="$tmp/t1" "$client" info "$w1_pid"
    expect "$(result)" "MDT_EIO hresult=0x00000000" &&
        stderr_has "permission denied connecting to $tmp/t1/dotnet-diagnostic-$w1_pid-" &&
        stderr_has "socket owned by uid 0, mode 600; you are uid $nobody"
}
check nobody_is_denied_info nobody_is_denied_info

nobody_is_denied_attach() {
    run_client $as_nobody env TMPDIR="$tmp/t1" "$client" attach "$w1_pid" "$testprof_clsid" \
        "$tmp/testprof.so" "$tmp/never"
    expect "$(result)" "MDT_EIO hresult=0x00000000" && stderr_has "permission denied" &&
        stderr_has "attach as the user who runs the process, or as root" && [ ! -e "$tmp/never" ]
}
check nobody_is_denied_attach nobody_is_denied_attach

nobody_cannot_read_environment() {
    run_client $as_nobody env -u TMPDIR "$client" info "$w1_pid"
    expect "$(result)" "MDT_ENOTFOUND hresult=0x00000000" &&
        stderr_has "its environment is not readable by uid $nobody, so its TMPDIR is unknown"
}
check nobody_cannot_read_environment nobody_cannot_read_environment

# A socket named for w1 with its start time, but owned by nobody, in a
# directory the client searches first: not used; the real one is.
foreign_socket_ignored() {
    key=$(sed 's/.*) //' "/proc/$w1_pid/stat" | awk '{print $20}')
    mkdir -m 755 "$tmp/t2"
    fake="$tmp/t2/dotnet-diagnostic-$w1_pid-$key-socket"
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' \
        "$fake" || return 1
    chown "$nobody" "$fake"
    run_client env TMPDIR="$tmp/t2" "$client" find "$w1_pid"
    expect "$(field socket)" "$tmp/t1/dotnet-diagnostic-$w1_pid-$key-socket" || return 1
    # Without the real directory in reach, the refusal is explained.
    mv "$tmp/t1/dotnet-diagnostic-$w1_pid-$key-socket" "$tmp/t1/hidden"
    run_client env TMPDIR="$tmp/t2" "$client" info "$w1_pid"
    mv "$tmp/t1/hidden" "$tmp/t1/dotnet-diagnostic-$w1_pid-$key-socket"
    expect "$(result)" "MDT_ENOTFOUND hresult=0x00000000" &&
        stderr_has "$fake belongs to uid $nobody, the process runs as uid 0 (ignored)"
}
check foreign_socket_ignored foreign_socket_ignored

mkdir -m 1777 "$tmp/t3"
start_waiter w2 $as_nobody env HOME=/nonexistent TMPDIR="$tmp/t3" dotnet "$waiter"
root_reaches_nobody() {
    wait_socket "$w2_pid" || return 1
    run_client "$client" info "$w2_pid"
    expect "$(result)" "MDT_OK hresult=0x00000000" && expect "$(field pid)" "$w2_pid" &&
        expect "$(stat -c %u "$tmp/t3/dotnet-diagnostic-$w2_pid-"*-socket)" "$nobody"
}
check root_reaches_nobody root_reaches_nobody

finish

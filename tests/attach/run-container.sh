#!/bin/sh
# The attach client against a process in a "container": its own mount
# namespace with a private /tmp (tmpfs) and its own PID namespace, where it
# is pid 1, made with unshare(1); the build tree's scratch folder is bound
# into it at the same path, wherever the checkout lives (under /tmp too). Its socket, /tmp/dotnet-diagnostic-1-*-socket
# inside, is invisible in the host's /tmp: the client must find it through
# /proc/PID/root with the PID from the NSpid line. ProcessInfo2 then answers
# pid 1, and an attach loads the test profiler (from a path both sides see).
# Needs root, unshare and dotnet; exit 77 with the reason otherwise.
. "${MDT_TOP_SRCDIR:-.}/tests/attach/common.sh"
need_dotnet
if [ "$(id -u)" -ne 0 ]; then
    echo "not root: cannot create mount and PID namespaces (skipped)" >&2
    exit 77
fi
if ! command -v unshare >/dev/null 2>&1 ||
    ! unshare --mount --pid --fork --mount-proc --kill-child sh -c 'mount -t tmpfs tmpfs /tmp' \
        2> "$tmp/unshare.log"; then
    echo "unshare cannot create mount and PID namespaces here (skipped):" >&2
    cat "$tmp/unshare.log" >&2
    exit 77
fi
build_waiter
build_testprof

# The target needs the scratch folder ($tmp, in the build tree: the program,
# the test profiler, its marker) at the same path. When the checkout lives
# under /tmp the private /tmp would hide it: it is bound to an empty folder
# outside /tmp first, and back onto the same path inside the new /tmp.
keep=
for d in /mnt /media /srv /opt; do
    if [ -d "$d" ] && [ -z "$(ls -A "$d" 2>/dev/null)" ]; then
        keep=$d
        break
    fi
done
if [ -z "$keep" ]; then
    echo "no empty folder outside /tmp (/mnt, /media, /srv, /opt) to carry the build tree into a private /tmp (skipped)" >&2
    exit 77
fi
# --kill-child: killing unshare (the job, killed at exit) ends the target.
start_waiter c1 unshare --mount --pid --fork --mount-proc --kill-child \
    sh -c 'mount --make-rprivate / && mount --bind "$2" "$3" && mount -t tmpfs tmpfs /tmp &&
           mkdir -p "$2" && mount --bind "$3" "$2" && umount "$3" && unset TMPDIR &&
           exec dotnet "$1"' sh "$waiter" "$tmp" "$keep"
host_pid=$(pgrep -P "$c1_bg" | head -n 1)
# As init of its namespace the target ignores SIGTERM (.NET re-raises it with
# the default action, which init is immune to): it must get SIGKILL.
started_kill="$host_pid"

container_pid_is_one() {
    expect "$c1_pid" 1 && [ -n "$host_pid" ] &&
        grep -q "^NSpid:[[:space:]]*$host_pid[[:space:]]*1\$" "/proc/$host_pid/status"
}
check container_pid_is_one container_pid_is_one

socket_found_through_proc_root() {
    wait_socket "$host_pid" || { echo "no socket found for $host_pid"; return 1; }
    run_client "$client" find "$host_pid"
    case "$(field socket)" in
    "/proc/$host_pid/root/tmp/dotnet-diagnostic-1-"*-socket) ;;
    *) echo "unexpected socket path '$(field socket)'"; return 1 ;;
    esac
    ! ls /tmp/dotnet-diagnostic-1-* > /dev/null 2>&1 || {
        echo "a socket for pid 1 in the host's /tmp: the test proves nothing"
        return 1
    }
}
check socket_found_through_proc_root socket_found_through_proc_root

info_in_container() {
    run_client "$client" info "$host_pid"
    expect "$(result)" "MDT_OK hresult=0x00000000" && expect "$(field pid)" 1 &&
        expect "$(field entrypoint)" Waiter
}
check info_in_container info_in_container

attach_in_container() {
    marker="$tmp/marker-c1"
    run_client "$client" attach "$host_pid" "$testprof_clsid" "$tmp/testprof.so" "$marker"
    expect "$(result)" "MDT_OK hresult=0x00000000" || return 1
    i=0
    until grep -qx "InitializeForAttach client_data_len=${#marker}" "$marker" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 100 ] && { echo "no marker from the profiler"; return 1; }
        sleep 0.1
    done
}
check attach_in_container attach_in_container

# A path under the container's private /tmp does not exist for the target.
missing_in_container_named() {
    run_client "$client" attach "$host_pid" "$testprof_clsid" /tmp/nowhere/testprof.so
    case "$(result)" in
    "MDT_EIO hresult=0x8"*) ;;
    *) echo "expected a refusal, got '$(result)'"; return 1 ;;
    esac
}
check missing_in_container_named missing_in_container_named

finish

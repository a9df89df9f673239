#!/bin/sh
# The attach client against real dotnet processes (data/attach/Waiter built
# with `dotnet build`): ProcessInfo2 answers the right pid and runtime
# version; the socket is found through the target's own TMPDIR and picked by
# start time over a newer stale one; AttachProfiler with a missing library or
# a CLSID the library does not serve is refused with the runtime's HRESULT;
# the test profiler (tests/attach/testprof.c) attaches, gets the client data
# and ProfilerAttachComplete; a second attach is refused as
# CORPROF_E_PROFILER_ALREADY_ACTIVE; a relative profiler path works from
# another working directory; a non-.NET process, a missing process and
# DOTNET_EnableDiagnostics=0 get clear errors; a stopped process times out
# within the timeout and is named as stopped. Exit 77 without dotnet.
. "${MDT_TOP_SRCDIR:-.}/tests/attach/common.sh"
need_dotnet
build_waiter
build_testprof

case $(uname -m) in
x86_64) arch=x64 ;;
aarch64) arch=arm64 ;;
*) arch= ;;
esac

mkdir -m 1777 "$tmp/t1"
start_waiter w1 env TMPDIR="$tmp/t1" dotnet "$waiter"
wait_socket "$w1_pid"
w1_version=$(sed -n 's/^version //p' "$w1_out")
w1_key=$(sed 's/.*) //' "/proc/$w1_pid/stat" | awk '{print $20}')

info_matches_process() {
    run_client env -u TMPDIR "$client" info "$w1_pid"
    expect "$(result)" "MDT_OK hresult=0x00000000" &&
        expect "$(field pid)" "$w1_pid" &&
        expect "$(field command)" ProcessInfo2 &&
        case "$(field clr_version)" in
        "$w1_version"*) ;;
        *) echo "clr_version '$(field clr_version)' does not start with '$w1_version'"; false ;;
        esac &&
        expect "$(field entrypoint)" Waiter &&
        expect "$(field os)" Linux &&
        { [ -z "$arch" ] || expect "$(field arch)" "$arch"; } &&
        case "$(field command_line)" in
        *"$waiter"*) ;;
        *) echo "command line lacks $waiter"; false ;;
        esac
}
check info_matches_process info_matches_process

# The client's own TMPDIR points elsewhere: the socket must be found through
# the target's environment, with the target's start time as key.
find_uses_target_tmpdir() {
    run_client env TMPDIR=/nonexistent "$client" find "$w1_pid"
    expect "$(field socket)" "$tmp/t1/dotnet-diagnostic-$w1_pid-$w1_key-socket"
}
check find_uses_target_tmpdir find_uses_target_tmpdir

# A stale socket of an earlier process with the same pid, newer than the
# live one: the start time still picks the live socket.
stale_newer_socket_ignored() {
    python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.close()' \
        "$tmp/t1/dotnet-diagnostic-$w1_pid-1-socket" || return 1
    touch -d '+1 hour' "$tmp/t1/dotnet-diagnostic-$w1_pid-1-socket"
    run_client "$client" find "$w1_pid"
    expect "$(field socket)" "$tmp/t1/dotnet-diagnostic-$w1_pid-$w1_key-socket" &&
        run_client "$client" info "$w1_pid" &&
        expect "$(result)" "MDT_OK hresult=0x00000000"
}
check stale_newer_socket_ignored stale_newer_socket_ignored

attach_missing_library() {
    run_client "$client" attach "$w1_pid" "$testprof_clsid" "$tmp/missing/testprof.so"
    case "$(result)" in
    "MDT_EIO hresult=0x8"*) ;;
    *) echo "expected MDT_EIO with a failure HRESULT, got '$(result)'"; return 1 ;;
    esac
    expect "$(cat "$tmp/client.rc")" 1 && stderr_has "the runtime refused: HRESULT 0x" &&
        stderr_has "$tmp/missing/testprof.so does not exist"
}
check attach_missing_library attach_missing_library

attach_wrong_clsid() {
    run_client "$client" attach "$w1_pid" '{00000000-1111-2222-3333-444444444444}' \
        "$tmp/testprof.so" "$tmp/never"
    # The runtime passes on what the library's DllGetClassObject answered.
    expect "$(result)" "MDT_EIO hresult=0x80040111" &&
        stderr_has "the runtime refused: HRESULT 0x80040111 (CLASS_E_CLASSNOTAVAILABLE" &&
        [ ! -e "$tmp/never" ]
}
check attach_wrong_clsid attach_wrong_clsid

# Wait up to 10 s for a line in a file.
wait_line() {
    i=0
    until grep -qx "$2" "$1" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 100 ] && { echo "no line '$2' in $1:"; cat "$1" 2>/dev/null; return 1; }
        sleep 0.1
    done
}

attach_loads_profiler() {
    marker="$tmp/marker-w1"
    run_client "$client" attach "$w1_pid" "$testprof_clsid" "$tmp/testprof.so" "$marker"
    expect "$(result)" "MDT_OK hresult=0x00000000" &&
        wait_line "$marker" "InitializeForAttach client_data_len=${#marker}" &&
        wait_line "$marker" "ProfilerAttachComplete"
}
check attach_loads_profiler attach_loads_profiler

attach_again_refused() {
    run_client "$client" attach "$w1_pid" "$testprof_clsid" "$tmp/testprof.so" "$tmp/marker-again"
    expect "$(result)" "MDT_EIO hresult=0x8013136A" &&
        stderr_has "CORPROF_E_PROFILER_ALREADY_ACTIVE" && [ ! -e "$tmp/marker-again" ]
}
check attach_again_refused attach_again_refused

# The target runs in /, the client in $tmp with a relative path.
start_waiter w2 sh -c 'cd / && exec env TMPDIR="$1" dotnet "$2"' sh "$tmp/t1" "$waiter"
attach_relative_path() {
    wait_socket "$w2_pid" || return 1
    marker="$tmp/marker-w2"
    (cd "$tmp" && run_client "$client" attach "$w2_pid" "$testprof_clsid" testprof.so "$marker")
    expect "$(result)" "MDT_OK hresult=0x00000000" &&
        wait_line "$marker" "InitializeForAttach client_data_len=${#marker}"
}
check attach_relative_path attach_relative_path

not_dotnet_process() {
    sleep 60 &
    s=$!
    started="$started $s"
    # the child is this shell until it has exec'd sleep (on a busy machine,
    # long enough for the client to name the process after the shell): wait
    # for the exec, bounding a hang only
    i=0
    while [ "$(cat /proc/$s/comm 2>/dev/null)" != sleep ] && [ $i -lt 3000 ]; do
        i=$((i + 1))
        sleep 0.1
    done
    run_client "$client" info "$s"
    expect "$(result)" "MDT_ENOTFOUND hresult=0x00000000" &&
        stderr_has "no diagnostics socket for process $s (sleep)" &&
        stderr_has "libcoreclr.so is not mapped"
}
check not_dotnet_process not_dotnet_process

no_such_process() {
    sh -c 'exit 0' &
    gone=$!
    wait "$gone"
    run_client "$client" attach "$gone" "$testprof_clsid" "$tmp/testprof.so"
    expect "$(result)" "MDT_ENOTFOUND hresult=0x00000000" &&
        stderr_has "no process with pid $gone"
}
check no_such_process no_such_process

start_waiter w3 env TMPDIR="$tmp/t1" DOTNET_EnableDiagnostics=0 dotnet "$waiter"
diagnostics_disabled() {
    run_client "$client" attach "$w3_pid" "$testprof_clsid" "$tmp/testprof.so"
    expect "$(result)" "MDT_ENOTFOUND hresult=0x00000000" &&
        stderr_has "diagnostics IPC is disabled by DOTNET_EnableDiagnostics=0"
}
check diagnostics_disabled diagnostics_disabled

# The kernel accepts the connection for a stopped process; nobody answers.
# kill -STOP returns before every thread has stopped (each stops the next
# time it runs in the kernel, later on a loaded machine): until they all
# say T, the runtime's diagnostics thread may still answer. At most 2 s.
wait_stopped() {
    i=0
    while [ $i -lt 200 ]; do
        all=1
        for s in /proc/"$1"/task/*/stat; do
            st=$(sed 's/.*) //' "$s" 2>/dev/null | cut -c1)
            case $st in T | t | '') ;; *) all=0; break ;; esac
        done
        [ $all = 0 ] || return 0
        sleep 0.01
        i=$((i + 1))
    done
    return 1
}

stopped_process_times_out() {
    kill -STOP "$w1_pid"
    wait_stopped "$w1_pid" || { echo "the process did not stop within 2 s"; kill -CONT "$w1_pid"; return 1; }
    t0=$(date +%s%N)
    run_client "$client" -t 700 info "$w1_pid"
    t1=$(date +%s%N)
    kill -CONT "$w1_pid"
    ms=$(((t1 - t0) / 1000000))
    echo "elapsed $ms ms"
    expect "$(result)" "MDT_EIO hresult=0x00000000" &&
        stderr_has "no answer within 700 ms" && stderr_has "the process is stopped" &&
        [ "$ms" -ge 650 ] && [ "$ms" -lt 3000 ]
}
check stopped_process_times_out stopped_process_times_out

finish

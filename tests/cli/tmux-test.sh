#!/bin/sh
# The interactive shell in a real terminal: mdinspect runs in a detached
# tmux session (its own server socket, 200x50), keys are sent with
# `send-keys` (Tab, Up, C-c, C-d) and the screen is read back with
# `capture-pane -p`. Checks: the prompt shows the current module;
# completion of command, table, column, type (namespace steps), member
# (after Type::), module, token and file names; history kept across two
# sessions in the default file under $HOME; --no-history; Ctrl-C at the
# prompt and during a long command (the command stops, the shell stays,
# the summary says it is partial); validate -a shows progress on the
# terminal; Ctrl-C in batch mode (-c) stops cleanly and runs nothing
# more; tables are cut to the terminal's width, `set wide on` prints them
# whole; output goes through $PAGER on a terminal; Ctrl-D, `quit` and
# SIGTERM leave.
#
# Every wait has a timeout, and the whole script is bounded (the tmux
# server is killed on exit), so it never hangs. Prints one line per check
# and finally "N passed, M failed"; exits 1 when a check failed, 99 when
# the program or tmux is missing.
#
# Environment: MDT_TOP_SRCDIR, MDT_BUILDDIR (from `make check`), MDINSPECT.
# The long command is `validate -a` over the Mono 4.5 framework when it is
# installed (/usr/lib/mono/4.5), else over many copies of a fixture.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=${MDT_TOP_SRCDIR:-$(cd "$here/../.." && pwd)}
build=${MDT_BUILDDIR:-$top/build}
prog=${MDINSPECT:-$build/mdinspect/mdinspect}
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac

if [ ! -x "$prog" ]; then
    echo "tmux-test.sh: $prog is not built" >&2
    exit 99
fi
if ! command -v tmux >/dev/null 2>&1; then
    echo "tmux-test.sh: tmux is not installed" >&2
    exit 99
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mdi-tmux.XXXXXX") || exit 99
sock=mdi-test-$$
T() { tmux -L "$sock" -f /dev/null "$@"; }
cleanup() {
    T kill-server >/dev/null 2>&1
    rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$sock"
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

. "$top/tests/common/check.sh"
ok() {
    check_pass "$1"
}
bad() {
    check_fail "$1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | sed 's/^/    | /'
}

sess=
nsess=0
screen() { T capture-pane -p -t "$sess" 2>/dev/null; }

# wait_for REGEX [SECONDS]: until the screen has a line matching REGEX.
wait_for() {
    n=$((${2:-5} * 10))
    while [ "$n" -gt 0 ]; do
        screen | grep -Eq -- "$1" && return 0
        sleep 0.1
        n=$((n - 1))
    done
    return 1
}

# wait_log REGEX [SECONDS]: until the pane's log ($tmp/pane.log, see
# pipe-pane below) has REGEX.
wait_log() {
    n=$((${2:-5} * 20))
    while [ "$n" -gt 0 ]; do
        grep -Eaq -- "$1" "$tmp/pane.log" 2>/dev/null && return 0
        sleep 0.05
        n=$((n - 1))
    done
    return 1
}

# expect_progress NAME SECONDS: a validate progress line reaches the pane
# (everything written to it goes to a log, since the line is rewritten in
# place and may go by faster than the screen is read).
expect_progress() {
    : >"$tmp/pane.log"
    T pipe-pane -t "$sess" -o "cat >> '$tmp/pane.log'"
    [ -n "${send:-}" ] && T send-keys -t "$sess" "$send" Enter
    if wait_log 'validate: [0-9]+/[0-9]+ [A-Za-z]' "$2"; then
        ok "$1"
    else
        bad "$1" "$(tail -c 300 "$tmp/pane.log")"
    fi
    T pipe-pane -t "$sess"
}

# check NAME REGEX [SECONDS]
check() {
    if wait_for "$2" "${3:-5}"; then ok "$1"; else bad "$1" "$(screen | grep -v '^$' | tail -n 15)"; fi
}

# The line the cursor is on (the prompt line being edited).
cursor_line() {
    y=$(T display-message -p -t "$sess" '#{cursor_y}' 2>/dev/null)
    screen | sed -n "$((y + 1))p"
}

# check_line NAME TEXT: the edited line reads exactly TEXT (trailing blanks
# ignored), waiting a little for the terminal to catch up.
check_line() {
    n=30
    while [ "$n" -gt 0 ]; do
        [ "$(cursor_line | sed 's/ *$//')" = "$2" ] && { ok "$1"; return; }
        sleep 0.1
        n=$((n - 1))
    done
    bad "$1" "expected: $2
got:      $(cursor_line)"
}

clear_line() {
    T send-keys -t "$sess" C-e C-u
    sleep 0.1
}

# start ARGS...: a session running mdinspect with ARGS from the top, then
# "[exited N]" when it ends (the pane stays so its last screen can be read);
# WIDTH=N makes the terminal N columns wide (default 200).
start() {
    old=$sess
    nsess=$((nsess + 1))
    sess=mdi$nsess
    cat >"$tmp/run$nsess.sh" <<EOF
cd '$top' || exit 1
# A shell runs mdinspect in its own process group; here sh shares it, so
# keep sh from dying of the Ctrl-C meant for mdinspect.
trap '' INT
HOME='$tmp/home' PAGER='sed s/^/PAGED:/' TERM=xterm NO_COLOR=1 "\$@"
echo "[exited \$?]"
sleep 600
EOF
    T new-session -d -s "$sess" -x "${WIDTH:-200}" -y 50 sh "$tmp/run$nsess.sh" "$prog" "$@" ||
        return 1
    # The old session goes only now: killing the last one stops the server.
    [ -n "$old" ] && T kill-session -t "$old" >/dev/null 2>&1
    return 0
}

mkdir -p "$tmp/home"

# ---- session 1: prompt, completion, pager, Ctrl-C, history written ----

start data/Everything.dll -i data/Sigs.dll
check "prompt shows the current module" '^Everything\.dll>( |$)' 10

T send-keys -t "$sess" 'hel' Tab
check_line "completes a command name" "Everything.dll> help"
clear_line

T send-keys -t "$sess" 'dump TypeD' Tab
check_line "completes a table name" "Everything.dll> dump TypeDef"
clear_line

T send-keys -t "$sess" 'dump typed' Tab
check_line "completes a table name in any case" "Everything.dll> dump TypeDef"
clear_line

T send-keys -t "$sess" 'dump Type' Tab Tab
check "lists the tables a prefix matches" 'TypeDef +TypeRef +TypeSpec'
clear_line

T send-keys -t "$sess" 'dump TypeDef where Ext' Tab
check_line "completes a column after where" "Everything.dll> dump TypeDef where Extends="
clear_line

T send-keys -t "$sess" 'type Ever' Tab
check_line "completes a namespace one step" "Everything.dll> type Everything."
T send-keys -t "$sess" 'Ci' Tab
check_line "completes a type name in the namespace" "Everything.dll> type Everything.Circle"
clear_line

T send-keys -t "$sess" 'type Everything.Outer+Mi' Tab
check_line "completes a nested type after +" "Everything.dll> type Everything.Outer+Middle"
clear_line

T send-keys -t "$sess" 'token Everything.Circle::Ra' Tab
check_line "completes a member name after Type::" "Everything.dll> token Everything.Circle::Radius"
clear_line

T send-keys -t "$sess" 'il Everything.Circle::get_Ra' Tab
check_line "completes a method name after il" "Everything.dll> il Everything.Circle::get_Radius"
clear_line

T send-keys -t "$sess" 'il -' Tab Tab
check "lists il's flags" '-a +--raw|--raw +-a'
clear_line

T send-keys -t "$sess" 'find Everything.Circle::' Tab Tab
check "lists the members of a type" 'Everything\.Circle::get_Radius'
clear_line

T send-keys -t "$sess" 'token 0x0200000' Tab Tab
check "lists the tokens of a table" '0x02000001 +0x02000002'
clear_line

T send-keys -t "$sess" 'use Sig' Tab
check_line "completes a module name" "Everything.dll> use Sigs.dll"
clear_line

T send-keys -t "$sess" 'open data/sample/Hello.e' Tab
check_line "completes a file path" "Everything.dll> open data/sample/Hello.exe"
clear_line

T send-keys -t "$sess" 'set style fr' Tab
check_line "completes a setting's value" "Everything.dll> set style friendly"
clear_line

T send-keys -t "$sess" 'types *Attribute' Enter
check "output goes through the pager on a terminal" '^PAGED:  0x02000004  class +Public +Everything\.InfoAttribute'

T send-keys -t "$sess" 'use Sigs' Enter
check "the prompt follows use" '^Sigs\.dll>( |$)'

T send-keys -t "$sess" 'frobnicate' Enter
check "an error leaves the shell running" "unknown command 'frobnicate'"
check_line "a prompt after the error" "Sigs.dll>"

T send-keys -t "$sess" 'dump TypeDef 1' C-c
check_line "Ctrl-C at the prompt drops the line" "Sigs.dll>"
T send-keys -t "$sess" 'tables' Enter
check "the shell reads the next line after Ctrl-C" 'PAGED:[0-9]+ tables present'

# A long command, interrupted: validate -a over many copies of a large
# module (mscorlib when Mono is installed), so that it runs for seconds
# however fast validation gets.
mkdir -p "$tmp/many"
big=$top/data/Everything.dll
copies=3000
if [ -f /usr/lib/mono/4.5/mscorlib.dll ]; then
    big=/usr/lib/mono/4.5/mscorlib.dll
    copies=60
fi
i=0
while [ $i -lt $copies ]; do cp "$big" "$tmp/many/M$i.dll"; i=$((i + 1)); done
long_open="open $tmp/many"
T send-keys -t "$sess" "$long_open" Enter
check "the long command's modules are open" 'PAGED:opened [0-9]+ modules' 60
send='validate -a' expect_progress "validate -a shows its progress on the terminal" 20
T send-keys -t "$sess" C-c
check "Ctrl-C stops a long command" 'validate: interrupted' 20
check "the summary of an interrupted validate says it is partial" \
    'PAGED:partial: interrupted after [0-9]+ of [0-9]+ modules' 10
T send-keys -t "$sess" 'set' Enter
check "the shell is still up after Ctrl-C" '^PAGED:style: +full' 10
T send-keys -t "$sess" 'quit' Enter
check "quit leaves" '^\[exited 0\]' 10
if [ -s "$tmp/home/.mdinspect_history" ]; then
    ok "history is kept in ~/.mdinspect_history"
else
    bad "history is kept in ~/.mdinspect_history" "$(ls -la "$tmp/home")"
fi

# ---- session 2: history from session 1; Ctrl-D ----

start data/Everything.dll -i
check "second session starts" '^Everything\.dll>( |$)' 10
T send-keys -t "$sess" Up
check_line "Up recalls the last line of the previous session" "Everything.dll> quit"
T send-keys -t "$sess" Up
check_line "Up again recalls the line before" "Everything.dll> set"
clear_line
T send-keys -t "$sess" C-d
check "Ctrl-D leaves" '^\[exited 0\]' 10

# ---- session 3: --history FILE and --no-history ----

start --history "$tmp/other-history" -i data/Everything.dll
check "session with --history starts" '^Everything\.dll>( |$)' 10
T send-keys -t "$sess" 'refs' Enter
check "refs runs" 'PAGED:2 assembly references'
# Ctrl-D is end-of-file only at a prompt: wait for it (typed while the
# command runs, the terminal would take it as an empty read).
check_line "a prompt after refs" "Everything.dll>"
T send-keys -t "$sess" C-d
check "Ctrl-D leaves (2)" '^\[exited 0\]' 10
if grep -qx refs "$tmp/other-history" 2>/dev/null; then
    ok "--history FILE keeps the history there"
else
    bad "--history FILE keeps the history there" "$(cat "$tmp/other-history" 2>&1)"
fi

start --no-history -i data/Everything.dll
check "session with --no-history starts" '^Everything\.dll>( |$)' 10
T send-keys -t "$sess" Up
check_line "--no-history: Up recalls nothing" "Everything.dll>"
T send-keys -t "$sess" 'quit' Enter
check "quit leaves (2)" '^\[exited 0\]' 10

# ---- session 4: batch mode (-c): Ctrl-C stops cleanly, nothing more runs ----

start -c "open $tmp/many; validate -a; modules"
send= expect_progress "batch validate shows its progress" 30
T send-keys -t "$sess" C-c
check "Ctrl-C in batch mode: a partial summary" 'partial: interrupted after [0-9]+ of [0-9]+ modules' 20
check "Ctrl-C in batch mode: the command fails, nothing after it runs" '^\[exited 1\]' 20
if screen | grep -q 'modules open'; then
    bad "the commands after the interrupted one did not run" "$(screen | tail -n 5)"
else
    ok "the commands after the interrupted one did not run"
fi

# ---- session 4b: tables cut to the terminal's width, --wide prints whole ----

WIDTH=80 start --no-pager -i data/Shell.dll
check "narrow session starts" '^Shell\.dll>( |$)' 10
T send-keys -t "$sess" 'memberrefs' Enter
check "a long table line is cut with an ellipsis" 'Shell\.Names\.Item2::Gone.*…|0x0a00000e .*…' 10
long=$(screen | sed 's/…/./g' | awk 'length($0) > 80' | head -n 1)
if [ -z "$long" ]; then ok "no line is wider than the terminal"; else bad "no line is wider than the terminal" "$long"; fi
T send-keys -t "$sess" 'set wide on' Enter 'memberrefs' Enter
sleep 1
if T capture-pane -p -J -t "$sess" | grep -q 'Shell.Names.Item2::Gone  *System.Void()  *not-loaded'; then
    ok "set wide on prints every cell whole"
else
    bad "set wide on prints every cell whole" "$(T capture-pane -p -J -t "$sess" | tail -n 8)"
fi
T send-keys -t "$sess" 'quit' Enter
check "quit leaves (narrow)" '^\[exited 0\]' 10

# ---- session 5: SIGTERM leaves cleanly (terminal restored, history kept) ----

start --history "$tmp/term-history" -i data/Everything.dll
check "session for SIGTERM starts" '^Everything\.dll>( |$)' 10
T send-keys -t "$sess" 'streams' Enter
check "streams runs" 'PAGED:metadata root: 5 streams'
check_line "a prompt after streams" "Everything.dll>"
pane=$(T display-message -p -t "$sess" '#{pane_pid}' 2>/dev/null)
pid=$(ps -o pid= --ppid "$pane" 2>/dev/null | head -n 1 | tr -d ' ')
if [ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null; then
    check "SIGTERM at the prompt leaves with status 0" '^\[exited 0\]' 10
else
    bad "SIGTERM at the prompt leaves with status 0" "no mdinspect process under pane $pane"
fi
if grep -qx streams "$tmp/term-history" 2>/dev/null; then
    ok "the history survives SIGTERM"
else
    bad "the history survives SIGTERM" "$(cat "$tmp/term-history" 2>&1)"
fi

check_done

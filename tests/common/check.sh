# What every script test shares (issue 29): one line per check, "PASS WHAT"
# or "FAIL WHAT" (details indented under it as "    | ..."), and the
# closing "N passed, M failed" that tests/summary.sh reads, with the exit
# status Automake's test driver reads: 0 when every check passed (and at
# least one ran), 1 when one failed, 77 when the test cannot run here
# (saying why), 99 when it broke before checking anything.
# Sourced by a test script:  . "$top/tests/common/check.sh"  (after setting
# top, the source tree); safe under `set -eu`.
# Python parts of a test use mdtcheck.py beside this file: sourcing this
# puts it on PYTHONPATH.

check_passed=0
check_failed=0
check_skipped=0
check_dir=${check_dir:-${top:?tests/common/check.sh needs top, the source tree}/tests/common}
PYTHONPATH=$check_dir${PYTHONPATH:+:$PYTHONPATH}
# ... without leaving __pycache__ in the source tree (it may be read-only).
PYTHONDONTWRITEBYTECODE=1
export PYTHONPATH PYTHONDONTWRITEBYTECODE

# check_pass WHAT / check_fail WHAT [DETAIL...]: count and say so.
check_pass() {
    check_passed=$((check_passed + 1))
    echo "PASS $1"
}
check_fail() {
    check_failed=$((check_failed + 1))
    echo "FAIL $1"
    shift
    for line in "$@"; do
        printf '%s\n' "$line" | sed 's/^/    | /'
    done
}

# check_count pass|fail: count a check whose line was printed elsewhere
# (by a child that says PASS or FAIL and exits 0 or 1).
check_count() {
    case $1 in
    pass) check_passed=$((check_passed + 1)) ;;
    *) check_failed=$((check_failed + 1)) ;;
    esac
}

# check_add NPASSED NFAILED: add checks a part counted without a line
# each (thousands of rows compared by awk; its FAIL lines are its own).
check_add() {
    check_passed=$((check_passed + $1))
    check_failed=$((check_failed + $2))
}

# check_that WHAT COMMAND [ARG...]: pass when COMMAND succeeds.
check_that() {
    check_what=$1
    shift
    if "$@"; then check_pass "$check_what"; else check_fail "$check_what"; fi
}

# check_skip WHY: the whole test cannot run here (a tool or file missing).
# A skip is never counted as a pass (tests/summary.sh counts it failed).
check_skip() {
    echo "${0##*/}: skipped: $*" >&2
    exit 77
}

# check_error WHY: the test broke before it could check (exit 99).
check_error() {
    echo "${0##*/}: $*" >&2
    exit 99
}

# check_absorb FILE STATUS: add the PASS and FAIL lines of a part that
# ran apart (a child process; a python part ending in mdtcheck.part()),
# shown as they are, and its exit status: one that failed (or crashed)
# without a FAIL line counts as a failed check; 77 (the part cannot run
# here) is a skip, which check_done reports as the test's status.
check_absorb() {
    if [ -r "$1" ]; then
        cat "$1"
        check_passed=$((check_passed + $(grep -c '^PASS ' "$1" || true)))
        check_failed=$((check_failed + $(grep -c '^FAIL ' "$1" || true)))
    fi
    if [ "${2:-0}" -eq 77 ]; then
        check_skipped=$((check_skipped + 1))
        echo "SKIP ${1##*/}: the part cannot run here"
    elif [ "${2:-0}" -ne 0 ] && ! grep -q '^FAIL ' "$1" 2>/dev/null; then
        check_fail "${1##*/}: the part exited $2"
    fi
}

# check_closing FILE STATUS: add the closing "N passed, M failed" of a
# child program that counts for itself (the C stress tests), shown as it
# printed it; a failing status without a failed count is one failure, 77
# a skip.
check_closing() {
    check_counts=
    if [ -r "$1" ]; then
        cat "$1"
        check_counts=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$1" |
            tail -n 1)
    fi
    if [ -n "$check_counts" ]; then check_add $check_counts; fi
    if [ "${2:-0}" -eq 77 ]; then
        check_skipped=$((check_skipped + 1))
        echo "SKIP ${1##*/}: it cannot run here"
    elif [ "${2:-0}" -ne 0 ] && { [ -z "$check_counts" ] || [ "${check_counts#* }" = 0 ]; }; then
        check_fail "${1##*/}: exited ${2}"
    fi
}

# check_part: end a part run by another script (no closing line).
check_part() {
    [ "$check_failed" -eq 0 ] || exit 1
    exit 0
}

# check_done: the closing line and the exit status (a skipped part makes
# the test a skip, which tests/summary.sh counts as failed, never passed).
check_done() {
    echo "$check_passed passed, $check_failed failed"
    if [ "$check_failed" -ne 0 ]; then exit 1; fi
    if [ "$check_skipped" -ne 0 ]; then exit 77; fi
    if [ "$check_passed" -eq 0 ]; then
        echo "${0##*/}: no check ran" >&2
        exit 1
    fi
    exit 0
}

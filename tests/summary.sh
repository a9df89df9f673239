#!/bin/sh
# Print the closing line CI reads, "N passed, N failed", for a finished
# `make check`: each Check program contributes its own counts (its log has
# "Checks: N, Failures: F, Errors: E"), a script test whose log ends with
# "N passed, M failed" (the closing line of tests/common/check.sh and
# mdtcheck.py, which every script test uses) contributes those counts, any
# other test counts as one.
# Usage: tests/summary.sh BUILDDIR
builddir=${1:-.}
passed=0
failed=0
for trs in $(find "$builddir" -name '*.trs' | sort); do
    log=${trs%.trs}.log
    result=$(sed -n 's/^:test-result: //p' "$trs" | head -n 1)
    counts=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' \
        "$log" 2>/dev/null | tail -n 1)
    if [ -z "$counts" ]; then
        plain=$(sed -n 's/^\([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2 0/p' "$log" \
            2>/dev/null | tail -n 1)
        [ -n "$plain" ] && counts="$(echo "$plain" | awk '{print $1 + $2, $2, 0}')"
    fi
    if [ -n "$counts" ]; then
        set -- $counts
        bad=$(($2 + $3))
        passed=$((passed + $1 - bad))
        failed=$((failed + bad))
        # A crash after Check printed its line still fails the program.
        if [ "$result" != PASS ] && [ "$bad" -eq 0 ]; then failed=$((failed + 1)); fi
    else
        case $result in
            PASS) passed=$((passed + 1)) ;;
            SKIP) echo "skipped (counted as failed): ${trs%.trs}"; failed=$((failed + 1)) ;;
            *) failed=$((failed + 1)) ;;
        esac
    fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]

"""What every test's Python part shares (issue 29), as tests/common/check.sh
does for shell: one line per check, "PASS WHAT" or "FAIL WHAT" with details
indented under it as "    | ...", and the closing "N passed, M failed"
that tests/summary.sh reads, with the exit status Automake's driver reads
(0 all passed and at least one ran, 1 a failure, 77 skipped, 99 broken).

    from mdtcheck import check, done
    check(ok, "what was checked", detail)
    done()              # the closing line; exits

A main() that returns its status ends with `return closing()`. A part of
a shell test that closes its own count calls part() instead of
done(): its lines are added to the shell's by check_absorb."""
import sys

passed = 0
failed = 0


def check(ok, what, detail=""):
    """Count one check; True when it passed."""
    global passed, failed
    if ok:
        passed += 1
        print("PASS " + what)
    else:
        failed += 1
        print("FAIL " + what)
        for line in str(detail or "").rstrip("\n").split("\n"):
            if line:
                print("    | " + line)
    sys.stdout.flush()
    return bool(ok)


def skip(why):
    """The whole test cannot run here; never counted as a pass."""
    sys.stderr.write("%s: skipped: %s\n" % (sys.argv[0], why))
    sys.exit(77)


def error(why):
    """The test broke before it could check."""
    sys.stderr.write("%s: %s\n" % (sys.argv[0], why))
    sys.exit(99)


def status():
    """The exit status the counts so far give."""
    return 1 if failed or not passed else 0


def add(npassed, nfailed):
    """Add checks counted elsewhere (a loop that keeps its own tally)."""
    global passed, failed
    passed += npassed
    failed += nfailed


def closing():
    """Print the closing line; return the exit status (for a main() that
    returns it)."""
    print("%d passed, %d failed" % (passed, failed))
    if not failed and not passed:
        sys.stderr.write("%s: no check ran\n" % sys.argv[0])
    sys.stdout.flush()
    return status()


def part():
    """End a part whose lines a shell test counts (check_absorb)."""
    sys.stdout.flush()
    sys.exit(1 if failed else 0)


def done():
    """The closing line, then exit."""
    sys.exit(closing())

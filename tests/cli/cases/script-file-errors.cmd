# -f: a bad line is a usage error with its line number and nothing runs; a missing script; -f on each FILE.
mdinspect -f tests/cli/inputs/bad-line.mdi; mdinspect -f tests/cli/inputs/nope.mdi; printf 'refs\n' > "${TMPDIR:-/tmp}/mdi-refs.$$.mdi" && mdinspect -f "${TMPDIR:-/tmp}/mdi-refs.$$.mdi" data/sample/Hello.exe data/fwd/Client.exe; rm -f "${TMPDIR:-/tmp}/mdi-refs.$$.mdi"

# tests/cli: build and test rules (included from Makefile.am).
# Golden transcripts of mdinspect: tests/cli/cases/NAME.cmd is a command line,
# NAME.out what it prints; tests/cli/run-golden.sh runs them all (with
# --update it rewrites the .out files). The damaged inputs come from
# tests/cli/inputs/make-inputs.py.
check_SCRIPTS += tests/cli/run-golden.sh
TESTS += tests/cli/run-golden.sh
EXTRA_DIST += tests/cli/run-golden.sh tests/cli/cases tests/cli/inputs

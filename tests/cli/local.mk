# tests/cli: build and test rules (included from Makefile.am).
# Golden transcripts of mdinspect: tests/cli/cases/NAME.cmd is a command line,
# NAME.out what it prints; tests/cli/run-golden.sh runs them all (with
# --update it rewrites the .out files). The damaged inputs come from
# tests/cli/inputs/make-inputs.py; tests/cli/inputs/*.mdi are scripts.
# tests/cli/man-check.sh (a part of doc/man-check.sh) keeps
# doc/mdinspect.1 in step with the command table and the transcripts;
# tests/cli/tmux-test.sh drives the interactive shell in a real terminal (tmux); tests/cli/hostile-paths.sh gives it paths
# that name FIFOs, devices, link cycles and directory loops (issue 25).
check_SCRIPTS += tests/cli/run-golden.sh tests/cli/tmux-test.sh \
	tests/cli/batch-formats.sh tests/cli/batch-parallel.sh tests/cli/batch-threads.sh tests/cli/batch-ranges.sh tests/cli/batch-lines.sh \
	tests/cli/batch-metadata-names.sh tests/cli/batch-cut.sh tests/cli/batch-files.sh tests/cli/batch-procs.sh tests/cli/batch-memory.sh tests/cli/batch-signatures.sh tests/cli/batch-native.sh tests/cli/batch-pprof.sh tests/cli/batch-pprof-go.sh \
	tests/cli/hostile-paths.sh tests/cli/type-names.sh tests/cli/decl-ildasm.sh tests/cli/derived-cycle.sh tests/cli/derived-framework.sh
TESTS += tests/cli/run-golden.sh tests/cli/tmux-test.sh \
	tests/cli/batch-formats.sh tests/cli/batch-parallel.sh tests/cli/batch-threads.sh tests/cli/batch-ranges.sh tests/cli/batch-lines.sh \
	tests/cli/batch-metadata-names.sh tests/cli/batch-cut.sh tests/cli/batch-files.sh tests/cli/batch-procs.sh tests/cli/batch-memory.sh tests/cli/batch-signatures.sh tests/cli/batch-native.sh tests/cli/batch-pprof.sh tests/cli/batch-pprof-go.sh \
	tests/cli/hostile-paths.sh tests/cli/type-names.sh tests/cli/decl-ildasm.sh tests/cli/derived-cycle.sh tests/cli/derived-framework.sh
EXTRA_DIST += tests/cli/run-golden.sh tests/cli/man-check.sh tests/cli/tmux-test.sh \
	tests/cli/batch-formats.sh tests/cli/batch-parallel.sh tests/cli/batch-threads.sh tests/cli/batch-ranges.sh tests/cli/batch-lines.sh \
	tests/cli/batch-metadata-names.sh tests/cli/batch-cut.sh tests/cli/batch-files.sh tests/cli/batch-procs.sh tests/cli/batch-memory.sh tests/cli/batch-signatures.sh tests/cli/batch-native.sh tests/cli/batch-pprof.sh tests/cli/batch-pprof-go.sh \
	tests/cli/hostile-paths.sh tests/cli/type-names.sh tests/cli/decl-ildasm.sh tests/cli/derived-cycle.sh tests/cli/derived-framework.sh \
	tests/cli/cases tests/cli/inputs

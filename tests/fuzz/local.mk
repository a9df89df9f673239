# tests/fuzz: build and test rules (included from Makefile.am).
#
# Each libFuzzer harness also builds, with any compiler, as a plain replayer
# of its seed corpus (replay.c supplies main(); -DREPLAY_DEFAULT_CORPUS names
# the corpus under the source tree), and `make check` runs it: a crash fails
# the test. With --enable-fuzzing (configure with CC=clang) the real fuzzer
# is built too, the library compiled into it under the same sanitizer and
# coverage flags. See tests/fuzz/README.md.

# Harnesses for `make fuzz`, PROGRAM=CORPUSDIR each (areas add theirs with +=).
FUZZ_RUNS =

check_PROGRAMS += tests/fuzz/fuzz_image_replay
TESTS += tests/fuzz/fuzz_image_replay
# Every replayer finds its inputs run from / without MDT_TOP_SRCDIR.
TESTS += tests/fuzz/standalone.sh
EXTRA_DIST += tests/fuzz/standalone.sh

tests_fuzz_fuzz_image_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_image.c
tests_fuzz_fuzz_image_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/image"'
tests_fuzz_fuzz_image_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_fuzz_fuzz_image_replay_LDADD = tests/common/libtestcommon.la libmdtools/libmdtools.la \
	$(TALLOC_LIBS)

# Flags of every libFuzzer target (other areas' harnesses use them too), and
# the libraries of a target that compiles the library's sources into itself.
MDT_FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined
MDT_FUZZ_LIBS = $(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) $(ZLIB_LIBS)

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_image
tests_fuzz_fuzz_image_SOURCES = tests/fuzz/fuzz_image.c tests/common/walk.c tests/common/layout.c \
	tests/common/rowruns.c \
	$(MDT_LIB_SOURCES)
tests_fuzz_fuzz_image_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_image_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_image_LDADD = $(MDT_FUZZ_LIBS)
endif

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/image.dict tests/fuzz/corpus/image

# What mdinspect's listing and printing commands ask of the library, over a
# damaged image (fuzz_commands.c): the replayer in `make check`, the fuzzer
# with --enable-fuzzing.
check_PROGRAMS += tests/fuzz/fuzz_commands_replay
TESTS += tests/fuzz/fuzz_commands_replay
tests_fuzz_fuzz_commands_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_commands.c
tests_fuzz_fuzz_commands_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/commands"'
tests_fuzz_fuzz_commands_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_fuzz_fuzz_commands_replay_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_commands
tests_fuzz_fuzz_commands_SOURCES = tests/fuzz/fuzz_commands.c $(MDT_LIB_SOURCES)
tests_fuzz_fuzz_commands_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_commands_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_commands_LDADD = $(MDT_FUZZ_LIBS)
endif
EXTRA_DIST += tests/fuzz/fuzz_commands.c tests/fuzz/corpus/commands

# Single-file bundles (fuzz_bundle.c: <mdtools/bundle.h>).
check_PROGRAMS += tests/fuzz/fuzz_bundle_replay
TESTS += tests/fuzz/fuzz_bundle_replay
tests_fuzz_fuzz_bundle_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_bundle.c
tests_fuzz_fuzz_bundle_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/bundle"'
tests_fuzz_fuzz_bundle_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_fuzz_fuzz_bundle_replay_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_bundle
tests_fuzz_fuzz_bundle_SOURCES = tests/fuzz/fuzz_bundle.c $(MDT_LIB_SOURCES)
tests_fuzz_fuzz_bundle_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_bundle_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_bundle_LDADD = $(MDT_FUZZ_LIBS)
endif
EXTRA_DIST += tests/fuzz/fuzz_bundle.c tests/fuzz/corpus/bundle tests/fuzz/make-bundle-seeds.py

# What a PE file says besides its metadata and strong-name verification
# (fuzz_pe.c: <mdtools/pe.h>, <mdtools/strongname.h>).
check_PROGRAMS += tests/fuzz/fuzz_pe_replay
TESTS += tests/fuzz/fuzz_pe_replay
tests_fuzz_fuzz_pe_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_pe.c
tests_fuzz_fuzz_pe_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/pe"'
tests_fuzz_fuzz_pe_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_fuzz_fuzz_pe_replay_LDADD = tests/common/libtestcommon.la libmdtools/libmdtools.la \
	$(TALLOC_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_pe
tests_fuzz_fuzz_pe_SOURCES = tests/fuzz/fuzz_pe.c tests/common/layout.c \
	$(MDT_LIB_SOURCES)
tests_fuzz_fuzz_pe_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_pe_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_pe_LDADD = $(MDT_FUZZ_LIBS)
endif
EXTRA_DIST += tests/fuzz/fuzz_pe.c tests/fuzz/corpus/pe tests/fuzz/pe.dict

# mdinspect's command language (fuzz_shell.c: parser, completion, dispatch
# on fixture modules) and its type-name lookup (fuzz_typename.c: `type
# NAME`, Type::member, globs), the shell's sources compiled in
# (MDI_SHELL_SOURCES, mdinspect/local.mk).
MDI_FUZZ_SHELL_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/mdinspect -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS)
MDI_FUZZ_SHELL_LIBS = $(TALLOC_LIBS) $(READLINE_LIBS)
check_PROGRAMS += tests/fuzz/fuzz_shell_replay tests/fuzz/fuzz_typename_replay
TESTS += tests/fuzz/fuzz_shell_replay tests/fuzz/fuzz_typename_replay
tests_fuzz_fuzz_shell_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_shell.c \
	$(MDI_COMMON_SOURCES) $(MDI_SHELL_SOURCES)
tests_fuzz_fuzz_shell_replay_CPPFLAGS = $(MDI_FUZZ_SHELL_CPPFLAGS) \
	-DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/shell"'
tests_fuzz_fuzz_shell_replay_LDADD = libmdtools/libmdtools.la $(MDI_FUZZ_SHELL_LIBS)
tests_fuzz_fuzz_typename_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_typename.c \
	$(MDI_COMMON_SOURCES) $(MDI_SHELL_SOURCES)
tests_fuzz_fuzz_typename_replay_CPPFLAGS = $(MDI_FUZZ_SHELL_CPPFLAGS) \
	-DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/typename"'
tests_fuzz_fuzz_typename_replay_LDADD = libmdtools/libmdtools.la $(MDI_FUZZ_SHELL_LIBS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_shell tests/fuzz/fuzz_typename
tests_fuzz_fuzz_shell_SOURCES = tests/fuzz/fuzz_shell.c $(MDI_COMMON_SOURCES) $(MDI_SHELL_SOURCES) \
	$(MDT_LIB_SOURCES)
tests_fuzz_fuzz_shell_CPPFLAGS = $(MDI_FUZZ_SHELL_CPPFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_shell_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_shell_LDADD = $(MDT_FUZZ_LIBS) $(MDI_FUZZ_SHELL_LIBS)
tests_fuzz_fuzz_typename_SOURCES = tests/fuzz/fuzz_typename.c $(MDI_COMMON_SOURCES) $(MDI_SHELL_SOURCES) \
	$(MDT_LIB_SOURCES)
tests_fuzz_fuzz_typename_CPPFLAGS = $(MDI_FUZZ_SHELL_CPPFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_typename_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_typename_LDADD = $(MDT_FUZZ_LIBS) $(MDI_FUZZ_SHELL_LIBS)
endif
EXTRA_DIST += tests/fuzz/fuzz_shell.c tests/fuzz/corpus/shell tests/fuzz/fuzz_typename.c \
	tests/fuzz/corpus/typename

# `make fuzz`: every harness registered in FUZZ_RUNS (PROGRAM=CORPUSDIR, the
# program in the build tree, the corpus relative to the source tree; any
# area's local.mk appends its own) runs for FUZZ_SECONDS on a scratch copy of
# its corpus (tests/fuzz/run-fuzz.sh; artifacts under tests/fuzz/fuzz-runs/).
FUZZ_SECONDS = 60
FUZZ_RUNS += tests/fuzz/fuzz_image=tests/fuzz/corpus/image
FUZZ_RUNS += tests/generics/fuzz_sig=tests/generics/fuzz-corpus
FUZZ_RUNS += tests/fuzz/fuzz_commands=tests/fuzz/corpus/commands
FUZZ_RUNS += tests/fuzz/fuzz_shell=tests/fuzz/corpus/shell
FUZZ_RUNS += tests/fuzz/fuzz_typename=tests/fuzz/corpus/typename
FUZZ_RUNS += tests/fuzz/fuzz_pe=tests/fuzz/corpus/pe
FUZZ_RUNS += tests/fuzz/fuzz_bundle=tests/fuzz/corpus/bundle
EXTRA_DIST += tests/fuzz/run-fuzz.sh tests/fuzz/commands.dict tests/fuzz/shell.dict \
	tests/fuzz/typename.dict
.PHONY: fuzz
if ENABLE_FUZZING
fuzz:
	@$(SHELL) $(top_srcdir)/tests/fuzz/run-fuzz.sh '$(FUZZ_SECONDS)' '$(top_srcdir)' '$(MAKE)' \
		$(FUZZ_RUNS)
else
fuzz:
	@echo "make fuzz: the libFuzzer harnesses are not built in this tree. Configure a" \
		"build directory with clang and --enable-fuzzing, e.g." >&2; \
	echo "    mkdir build-fuzz && cd build-fuzz && ../configure --enable-fuzzing CC=clang" \
		"&& make fuzz" >&2; \
	echo "(needs libclang-rt-14-dev or another clang with libFuzzer; see tests/fuzz/README.md)" >&2; \
	exit 1
endif
mostlyclean-local: clean-fuzz-runs
clean-fuzz-runs:
	rm -rf tests/fuzz/fuzz-runs

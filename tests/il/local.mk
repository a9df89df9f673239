# tests/il: method bodies and instructions (<mdtools/il.h>, issue 26).
# Included from Makefile.am. The fixture tests/il/data/Opcodes.dll is
# rebuilt by tests/il/data/build.sh (Mono's ilasm).
if HAVE_CHECK
check_PROGRAMS += tests/il/test_il
TESTS += tests/il/test_il
tests_il_test_il_SOURCES = tests/il/test_il.c $(TEST_MAIN)
tests_il_test_il_CPPFLAGS = $(TEST_CPPFLAGS)
tests_il_test_il_LDADD = $(TEST_LDADD)
endif
EXTRA_DIST += tests/il/data/Opcodes.il tests/il/data/Opcodes.dll tests/il/data/BadBodies.dll \
	tests/il/data/build.sh

# libFuzzer harness of the body decoder (fuzz_il.c): always built as a
# replayer of tests/il/corpus/ (tests/fuzz/replay.c) for `make check`; with
# --enable-fuzzing (CC=clang) also as the real fuzzer, the library compiled
# in with the sanitizers. `make fuzz` runs it (FUZZ_RUNS).
check_PROGRAMS += tests/il/fuzz_il_replay
TESTS += tests/il/fuzz_il_replay
tests_il_fuzz_il_replay_SOURCES = tests/fuzz/replay.c tests/il/fuzz_il.c
tests_il_fuzz_il_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/il/corpus"'
tests_il_fuzz_il_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_il_fuzz_il_replay_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
EXTRA_DIST += tests/il/fuzz_il.c tests/il/corpus

if ENABLE_FUZZING
noinst_PROGRAMS += tests/il/fuzz_il
tests_il_fuzz_il_SOURCES = tests/il/fuzz_il.c $(MDT_LIB_SOURCES)
tests_il_fuzz_il_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS) $(ZLIB_CFLAGS)
tests_il_fuzz_il_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_il_fuzz_il_LDADD = $(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) $(ZLIB_LIBS)
endif
FUZZ_RUNS += tests/il/fuzz_il=tests/il/corpus

# Differential tests of the decoder against monodis and ILDasm (ildiff.py
# parses both; ILDasm is fetched from NuGet into the build tree). Each takes
# a sample in make check; `--all` runs the whole corpus (tests/il/README.md).
check_SCRIPTS += tests/il/diff-monodis.sh tests/il/diff-ildasm.sh
TESTS += tests/il/diff-monodis.sh tests/il/diff-ildasm.sh
EXTRA_DIST += tests/il/diff-monodis.sh tests/il/diff-ildasm.sh tests/il/ildiff.py

# Round trip: il -a --ilasm, the .NET ILAsm (fetched like ILDasm), the
# rebuilt module compared with the original (ilcmp.py, table row counts).
check_SCRIPTS += tests/il/roundtrip.sh
TESTS += tests/il/roundtrip.sh
EXTRA_DIST += tests/il/roundtrip.sh tests/il/ilcmp.py tests/il/fetch-tool.sh

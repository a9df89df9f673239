# tests/generics: signatures, names, values, custom attributes, descriptors
# (issue 4). Included from Makefile.am. Check programs, one per area.
if HAVE_CHECK
GENERICS_TESTS = tests/generics/test_names tests/generics/test_values \
	tests/generics/test_attr tests/generics/test_descriptor
check_PROGRAMS += $(GENERICS_TESTS)
TESTS += $(GENERICS_TESTS)

tests_generics_test_names_SOURCES = tests/generics/test_names.c tests/generics/gtest.h $(TEST_MAIN)
tests_generics_test_names_CPPFLAGS = $(TEST_CPPFLAGS)
tests_generics_test_names_LDADD = $(TEST_LDADD)

tests_generics_test_values_SOURCES = tests/generics/test_values.c tests/generics/gtest.h $(TEST_MAIN)
tests_generics_test_values_CPPFLAGS = $(TEST_CPPFLAGS)
tests_generics_test_values_LDADD = $(TEST_LDADD)

tests_generics_test_attr_SOURCES = tests/generics/test_attr.c tests/generics/gtest.h $(TEST_MAIN)
tests_generics_test_attr_CPPFLAGS = $(TEST_CPPFLAGS)
tests_generics_test_attr_LDADD = $(TEST_LDADD)

tests_generics_test_descriptor_SOURCES = tests/generics/test_descriptor.c tests/generics/gtest.h \
	$(TEST_MAIN)
tests_generics_test_descriptor_CPPFLAGS = $(TEST_CPPFLAGS)
tests_generics_test_descriptor_LDADD = $(TEST_LDADD)
endif

# Differential test against Mono.Cecil (tests/generics/README.md).
check_PROGRAMS += tests/generics/md-names
tests_generics_md_names_SOURCES = tests/generics/md-names.c
tests_generics_md_names_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
tests_generics_md_names_CFLAGS = $(MDT_WARN_CFLAGS) -O2
tests_generics_md_names_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
TESTS += tests/generics/diff-names.sh
EXTRA_DIST += tests/generics/diff-names.sh tests/generics/cecil-names.cs \
	tests/generics/README.md

# libFuzzer harness for signature, custom attribute, constant and descriptor
# input (fuzz_sig.c): always built as a replayer of fuzz-corpus/ (with
# tests/fuzz/replay.c) for `make check`; with --enable-fuzzing (CC=clang)
# also as the real fuzzer, the library compiled in with the sanitizers.
check_PROGRAMS += tests/generics/fuzz_sig_replay
TESTS += tests/generics/fuzz_sig_replay
tests_generics_fuzz_sig_replay_SOURCES = tests/fuzz/replay.c tests/generics/fuzz_sig.c
tests_generics_fuzz_sig_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/generics/fuzz-corpus"'
tests_generics_fuzz_sig_replay_CFLAGS = $(MDT_WARN_CFLAGS)
# The convenience library: the harness also calls the blob printer alone
# (mdt__sig_text_name_buf), which the shared library does not export.
tests_generics_fuzz_sig_replay_LDADD = libmdtools/libmdtools_core.la $(TALLOC_LIBS) $(NETTLE_LIBS) \
	$(GMP_LIBS) $(ZLIB_LIBS)
EXTRA_DIST += tests/generics/fuzz_sig.c tests/generics/fuzz-corpus

if ENABLE_FUZZING
noinst_PROGRAMS += tests/generics/fuzz_sig
tests_generics_fuzz_sig_SOURCES = tests/generics/fuzz_sig.c $(MDT_LIB_SOURCES)
tests_generics_fuzz_sig_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_generics_fuzz_sig_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_generics_fuzz_sig_LDADD = $(MDT_FUZZ_LIBS)
endif

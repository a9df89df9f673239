# tests/typeref: the module set and reference resolution (included from
# Makefile.am). test_typeref checks every expectation of data/resolve/README.md
# and of the corpus module sets; stress runs resolvers on several threads
# while modules come and go (tsan.sh builds the same program with
# -fsanitize=thread); fuzz_resolve_replay replays the fuzz corpus;
# cecil-diff.sh compares every TypeRef and ExportedType of the Mono 4.5
# framework with Mono.Cecil.
if HAVE_CHECK
check_PROGRAMS += tests/typeref/test_typeref
TESTS += tests/typeref/test_typeref
tests_typeref_test_typeref_SOURCES = tests/typeref/test_typeref.c $(TEST_MAIN)
tests_typeref_test_typeref_CPPFLAGS = $(TEST_CPPFLAGS)
tests_typeref_test_typeref_LDADD = $(TEST_LDADD)
endif

check_PROGRAMS += tests/typeref/stress
TESTS += tests/typeref/stress
tests_typeref_stress_SOURCES = tests/typeref/stress.c
tests_typeref_stress_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common $(TALLOC_CFLAGS)
tests_typeref_stress_CFLAGS = $(MDT_WARN_CFLAGS) -pthread
tests_typeref_stress_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS) -lpthread

check_PROGRAMS += tests/typeref/fuzz_resolve_replay
TESTS += tests/typeref/fuzz_resolve_replay
tests_typeref_fuzz_resolve_replay_SOURCES = tests/fuzz/replay.c tests/typeref/fuzz_resolve.c
tests_typeref_fuzz_resolve_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/typeref/corpus"'
tests_typeref_fuzz_resolve_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_typeref_fuzz_resolve_replay_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
# The fuzzer itself (--enable-fuzzing), run by `make fuzz`.
if ENABLE_FUZZING
noinst_PROGRAMS += tests/typeref/fuzz_resolve
tests_typeref_fuzz_resolve_SOURCES = tests/typeref/fuzz_resolve.c $(MDT_LIB_SOURCES)
tests_typeref_fuzz_resolve_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_typeref_fuzz_resolve_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_typeref_fuzz_resolve_LDADD = $(MDT_FUZZ_LIBS)
endif
FUZZ_RUNS += tests/typeref/fuzz_resolve=tests/typeref/corpus

check_PROGRAMS += tests/typeref/resolve_dump
tests_typeref_resolve_dump_SOURCES = tests/typeref/resolve_dump.c
tests_typeref_resolve_dump_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
tests_typeref_resolve_dump_CFLAGS = $(MDT_WARN_CFLAGS)
tests_typeref_resolve_dump_LDFLAGS = -no-install
tests_typeref_resolve_dump_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

TESTS += tests/typeref/tsan.sh tests/typeref/cecil-diff.sh

EXTRA_DIST += tests/typeref/tsan.sh tests/typeref/make-corpus.py tests/typeref/cecil-diff.sh \
	tests/typeref/CecilDiff.cs tests/typeref/cecil-exceptions.txt tests/typeref/README.md \
	tests/typeref/corpus data/resolve

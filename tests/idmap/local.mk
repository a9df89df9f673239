# Runtime-ID maps (issue 6): unit tests, trace replays, a randomized model
# check, a threaded stress test (also built with TSan by run-tsan.sh) and a
# SIGPROF test that fails if a signal-safe lookup allocates or locks. See
# tests/idmap/README.md.
if HAVE_CHECK
check_PROGRAMS += tests/idmap/test_idmap
TESTS += tests/idmap/test_idmap
tests_idmap_test_idmap_SOURCES = tests/idmap/test_idmap.c $(TEST_MAIN)
tests_idmap_test_idmap_CPPFLAGS = $(TEST_CPPFLAGS)
tests_idmap_test_idmap_LDADD = $(TEST_LDADD)
endif

check_PROGRAMS += tests/idmap/replay tests/idmap/random_model tests/idmap/stress \
	tests/idmap/sigtest tests/idmap/shortlived
TESTS += tests/idmap/run-traces.sh tests/idmap/random_model tests/idmap/stress \
	tests/idmap/sigtest tests/idmap/shortlived tests/idmap/run-fenced.sh \
	tests/idmap/run-tsan.sh tests/idmap/run-claimrace.sh
EXTRA_DIST += tests/idmap/README.md tests/idmap/traces tests/idmap/run-traces.sh \
	tests/idmap/run-fenced.sh tests/idmap/run-tsan.sh tests/idmap/run-claimrace.sh \
	tests/idmap/claimrace.c

tests_idmap_replay_SOURCES = tests/idmap/replay.c
tests_idmap_replay_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_replay_LDADD = libmdtools/libmdtools.la

tests_idmap_random_model_SOURCES = tests/idmap/random_model.c
tests_idmap_random_model_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_random_model_LDADD = libmdtools/libmdtools.la

tests_idmap_stress_SOURCES = tests/idmap/stress.c
tests_idmap_stress_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_stress_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_stress_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)

tests_idmap_shortlived_SOURCES = tests/idmap/shortlived.c
tests_idmap_shortlived_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_shortlived_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_shortlived_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)

tests_idmap_sigtest_SOURCES = tests/idmap/sigtest.c
tests_idmap_sigtest_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_sigtest_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_sigtest_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS) -ldl

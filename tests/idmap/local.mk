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
	tests/idmap/sigtest tests/idmap/shortlived tests/idmap/order_oracle tests/idmap/appendrace
TESTS += tests/idmap/run-traces.sh tests/idmap/random_model tests/idmap/order_oracle \
	tests/idmap/stress tests/idmap/appendrace \
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

tests_idmap_order_oracle_SOURCES = tests/idmap/order_oracle.c
tests_idmap_order_oracle_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_order_oracle_LDADD = libmdtools/libmdtools.la

tests_idmap_stress_SOURCES = tests/idmap/stress.c
tests_idmap_stress_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_stress_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_stress_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)

tests_idmap_shortlived_SOURCES = tests/idmap/shortlived.c
tests_idmap_shortlived_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_shortlived_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_shortlived_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)

tests_idmap_appendrace_SOURCES = tests/idmap/appendrace.c
tests_idmap_appendrace_CPPFLAGS = $(MDT_CPPFLAGS)
tests_idmap_appendrace_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_appendrace_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)

tests_idmap_sigtest_SOURCES = tests/idmap/sigtest.c
tests_idmap_sigtest_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common
tests_idmap_sigtest_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_sigtest_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS) -ldl

# The same SIGPROF test against libmdtools.so loaded with dlopen() once the
# static TLS surplus is used up by libraries with initial-exec TLS blocks
# (tlshog.c, in three sizes), as a profiler loads it. It must not link
# libmdtools: it finds libmdtools/.libs/libmdtools.so and the hogs under
# MDT_BUILDDIR, or the build tree it was compiled in.
check_PROGRAMS += tests/idmap/sigtest_dl
TESTS += tests/idmap/sigtest_dl
tests_idmap_sigtest_dl_SOURCES = tests/idmap/sigtest.c
tests_idmap_sigtest_dl_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common -DSIGTEST_DLOPEN \
	-DSIGTEST_BUILDDIR='"$(abs_top_builddir)"'
tests_idmap_sigtest_dl_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_idmap_sigtest_dl_LDADD = $(AX_PTHREAD_CFLAGS) -ldl
EXTRA_tests_idmap_sigtest_dl_DEPENDENCIES = libmdtools/libmdtools.la \
	tests/idmap/libtlshog512.la tests/idmap/libtlshog64.la tests/idmap/libtlshog8.la

# Libraries that only hold an initial-exec TLS block (for sigtest_dl).
check_LTLIBRARIES += tests/idmap/libtlshog512.la tests/idmap/libtlshog64.la \
	tests/idmap/libtlshog8.la
TLSHOG_LDFLAGS = -module -shared -avoid-version $(MDT_SO_LDFLAGS) -rpath /nowhere
tests_idmap_libtlshog512_la_SOURCES = tests/idmap/tlshog.c
tests_idmap_libtlshog512_la_CPPFLAGS = -DHOG_BYTES=512
tests_idmap_libtlshog512_la_LDFLAGS = $(TLSHOG_LDFLAGS)
tests_idmap_libtlshog64_la_SOURCES = tests/idmap/tlshog.c
tests_idmap_libtlshog64_la_CPPFLAGS = -DHOG_BYTES=64
tests_idmap_libtlshog64_la_LDFLAGS = $(TLSHOG_LDFLAGS)
tests_idmap_libtlshog8_la_SOURCES = tests/idmap/tlshog.c
tests_idmap_libtlshog8_la_CPPFLAGS = -DHOG_BYTES=8
tests_idmap_libtlshog8_la_LDFLAGS = $(TLSHOG_LDFLAGS)

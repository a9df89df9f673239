# The profiler's tests (issue 14). The runtime tests need dotnet: without it
# they exit 77 and say why. See tests/profiler/README.md.
TESTS += tests/profiler/names.sh tests/profiler/plugins.sh tests/profiler/calls.sh \
	tests/profiler/alloc.sh tests/profiler/attach.sh \
	tests/profiler/osr.sh tests/profiler/starved.sh tests/profiler/native.sh tests/profiler/memmove.sh tests/profiler/web.sh \
	tests/profiler/threads.sh \
	tests/profiler/wall.sh tests/profiler/throws.sh tests/profiler/contention.sh \
	tests/profiler/allocstacks.sh tests/profiler/heap.sh tests/profiler/ilmaps.sh tests/profiler/perfclock.sh
EXTRA_DIST += tests/profiler/README.md tests/profiler/common.sh tests/profiler/check.py tests/profiler/offline.py \
	tests/profiler/names.sh tests/profiler/plugins.sh tests/profiler/calls.sh \
	tests/profiler/alloc.sh tests/profiler/attach.sh tests/profiler/man-check.sh \
	tests/profiler/osr.sh tests/profiler/starved.sh tests/profiler/interpose.c data/profiler \
	tests/profiler/native.sh tests/profiler/memmove.sh tests/profiler/native.py tests/profiler/web.sh \
	tests/profiler/threads.sh tests/profiler/threads.py \
	tests/profiler/wall.sh tests/profiler/wall.py tests/profiler/throws.sh \
	tests/profiler/contention.sh tests/profiler/events.py tests/profiler/ilmaps.sh \
	tests/profiler/allocstacks.sh tests/profiler/allocstacks.py tests/profiler/heap.sh \
	tests/profiler/heap.py tests/profiler/perfclock.sh

# The handler test: a probe build of the profiler and the interposer it is
# run with.
TESTS += tests/profiler/handler.sh
EXTRA_DIST += tests/profiler/handler.sh
check_LTLIBRARIES += tests/profiler/libmdprofile_probe.la tests/profiler/libmdpinterpose.la
tests_profiler_libmdprofile_probe_la_SOURCES = $(MDP_CLR_SOURCES) $(profiler_libmdpcore_la_SOURCES)
tests_profiler_libmdprofile_probe_la_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler -DMDP_HANDLER_PROBE
tests_profiler_libmdprofile_probe_la_CFLAGS = $(MDT_WARN_CFLAGS) $(TALLOC_CFLAGS) $(XXHASH_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_libmdprofile_probe_la_LIBADD = libmdtools/libmdtools_core.la \
	$(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) $(ZLIB_LIBS) -ldl -lrt -lm
tests_profiler_libmdprofile_probe_la_LDFLAGS = -module -shared -avoid-version -no-undefined $(MDT_SO_LDFLAGS) \
	-rpath $(abs_builddir) $(AX_PTHREAD_CFLAGS) \
	-Wl,--version-script=$(top_srcdir)/profiler/coreclr/exports.map
tests_profiler_libmdpinterpose_la_SOURCES = tests/profiler/interpose.c
tests_profiler_libmdpinterpose_la_CPPFLAGS = -I$(top_srcdir)/tests/common
tests_profiler_libmdpinterpose_la_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_profiler_libmdpinterpose_la_LIBADD = -ldl
tests_profiler_libmdpinterpose_la_LDFLAGS = -module -shared -avoid-version $(MDT_SO_LDFLAGS) -rpath $(abs_builddir)

# The core without a runtime (Check).
if HAVE_CHECK
check_PROGRAMS += tests/profiler/test_core
TESTS += tests/profiler/test_core
tests_profiler_test_core_SOURCES = tests/profiler/test_core.c $(TEST_MAIN)
tests_profiler_test_core_CPPFLAGS = $(TEST_CPPFLAGS) -I$(top_srcdir)/profiler
tests_profiler_test_core_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_profiler_test_core_LDADD = profiler/libmdpcore.la $(TEST_LDADD) -ldl -lrt $(AX_PTHREAD_CFLAGS)
endif

# Link correctness: the shared objects load with dlopen(RTLD_NOW), and a
# profiled run with LD_BIND_NOW=1 writes its log.
check_PROGRAMS += tests/profiler/dlnow
tests_profiler_dlnow_SOURCES = tests/profiler/dlnow.c
tests_profiler_dlnow_CFLAGS = $(MDT_WARN_CFLAGS)
tests_profiler_dlnow_LDADD = -ldl
TESTS += tests/profiler/link.sh
EXTRA_DIST += tests/profiler/link.sh

# The lifecycle: child processes, signals, attach again, the output path
# (lifecycle.py drives each).
TESTS += tests/profiler/children.sh tests/profiler/signals.sh tests/profiler/reattach.sh \
	tests/profiler/output.sh
EXTRA_DIST += tests/profiler/children.sh tests/profiler/signals.sh tests/profiler/reattach.sh \
	tests/profiler/output.sh tests/profiler/lifecycle.py

# A single-file app: its bundled assemblies named in-process and, from the
# bundle the header names, offline (singlefile.sh).
TESTS += tests/profiler/singlefile.sh
EXTRA_DIST += tests/profiler/singlefile.sh
# A self-contained one with compressed assemblies: its ReadyToRun images in
# anonymous memory, read by the profiler all the same (compressed.sh).
TESTS += tests/profiler/compressed.sh
EXTRA_DIST += tests/profiler/compressed.sh

# Races (issue 24): seqs.c's holds and retire watermark, the rings and the
# drain thread's wait, wake and final flush, wall mode's signals to threads
# that come and go, under threads with invariants
# checked at every step; run-race-tsan.sh builds them and the core with
# ThreadSanitizer (skips without it). tests/profiler/README.md.
check_PROGRAMS += tests/profiler/race_seqs tests/profiler/race_drain tests/profiler/race_wall \
	tests/profiler/race_poke tests/profiler/race_perf
TESTS += tests/profiler/race_seqs tests/profiler/race_drain tests/profiler/race_wall \
	tests/profiler/race_poke tests/profiler/race_perf tests/profiler/run-race-tsan.sh
EXTRA_DIST += tests/profiler/run-race-tsan.sh tests/profiler/race-mutants.sh
RACE_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
RACE_LDADD = profiler/libmdpcore.la libmdtools/libmdtools.la $(TALLOC_LIBS) -ldl -lrt -lm \
	$(AX_PTHREAD_CFLAGS)
tests_profiler_race_seqs_SOURCES = tests/profiler/race_seqs.c tests/profiler/race.h
tests_profiler_race_seqs_CPPFLAGS = $(RACE_CPPFLAGS)
tests_profiler_race_seqs_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_race_seqs_LDADD = $(RACE_LDADD)
tests_profiler_race_drain_SOURCES = tests/profiler/race_drain.c tests/profiler/race.h
tests_profiler_race_drain_CPPFLAGS = $(RACE_CPPFLAGS)
tests_profiler_race_drain_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_race_drain_LDADD = $(RACE_LDADD)
tests_profiler_race_wall_SOURCES = tests/profiler/race_wall.c tests/profiler/race.h \
	tests/profiler/race_workers.h
tests_profiler_race_wall_CPPFLAGS = $(RACE_CPPFLAGS)
tests_profiler_race_wall_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_race_wall_LDADD = $(RACE_LDADD)
tests_profiler_race_poke_SOURCES = tests/profiler/race_poke.c tests/profiler/race.h
tests_profiler_race_poke_CPPFLAGS = $(RACE_CPPFLAGS)
tests_profiler_race_poke_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_race_poke_LDADD = $(RACE_LDADD)
tests_profiler_race_perf_SOURCES = tests/profiler/race_perf.c tests/profiler/race.h \
	tests/profiler/race_workers.h
tests_profiler_race_perf_CPPFLAGS = $(RACE_CPPFLAGS)
tests_profiler_race_perf_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_profiler_race_perf_LDADD = $(RACE_LDADD)

# mdprofile (issue 14): the CoreCLR profiler (a shared object the runtime
# loads) and its launcher. Included from the top-level Makefile.am.
#
# The profiler links libmdtools statically: the library's PIC objects (the
# convenience library libmdtools/libmdtools_core.la, compiled once for both)
# go into libmdprofile.so, whose version script exports DllGetClassObject
# only. A guest in someone else's process should not need a matching
# libmdtools.so on the loader's path, nor clash with another copy of it
# loaded by the host.

pkglib_LTLIBRARIES = profiler/libmdprofile.la
noinst_LTLIBRARIES += profiler/libmdpcore.la

# The runtime-independent core (also linked into its unit test).
profiler_libmdpcore_la_SOURCES = \
	profiler/core/core.h \
	profiler/core/base.h \
	profiler/core/sampler.h \
	profiler/core/naming.h \
	profiler/core/naming_state.h \
	profiler/core/aggregate.h \
	profiler/core/drain.h \
	profiler/core/modes.h \
	profiler/core/log.h \
	profiler/core/log_state.h \
	profiler/core/lifetime.h \
	profiler/core/core_int.h \
	profiler/core/hash.h \
	profiler/core/hash.c \
	profiler/core/ring.h \
	profiler/core/config.c \
	profiler/core/core.c \
	profiler/core/modules.c \
	profiler/core/maps.c \
	profiler/core/execmap.c \
	profiler/core/codemap.c \
	profiler/core/seqs.c \
	profiler/core/frames.c \
	profiler/core/unwind.h \
	profiler/core/unwind.c \
	profiler/core/sampler.c \
	profiler/core/slots.c \
	profiler/core/perfclock.c \
	profiler/core/state.c \
	profiler/core/drain.c \
	profiler/core/drainloop.c \
	profiler/core/aggregate.c \
	profiler/core/records.c \
	profiler/core/channel.h \
	profiler/core/hex.h \
	profiler/core/growbuf.h \
	profiler/core/channel.c \
	profiler/core/logfile.c \
	profiler/core/logname.c \
	profiler/core/notes.c \
	profiler/core/header.c \
	profiler/core/termsig.c \
	profiler/core/calls.c \
	profiler/core/alloc.c \
	profiler/core/events.c \
	profiler/core/allocstack.c \
	profiler/core/heap.c \
	profiler/core/native.h \
	profiler/core/elfmap.c \
	profiler/core/activity.c \
	profiler/core/threads.c \
	profiler/core/wall.c \
	profiler/core/threadnames.c
profiler_libmdpcore_la_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
profiler_libmdpcore_la_CFLAGS = $(MDT_WARN_CFLAGS) $(TALLOC_CFLAGS) $(XXHASH_CFLAGS) $(AX_PTHREAD_CFLAGS)
# allocstack.c: log() and expm1() for the sampling intervals and weights
profiler_libmdpcore_la_LIBADD = -lm

# The CoreCLR adapter and the shared object.
MDP_CLR_SOURCES = \
	profiler/coreclr/corprof.h \
	profiler/coreclr/callback.def \
	profiler/coreclr/info.def \
	profiler/coreclr/clr.h \
	profiler/coreclr/guid.c \
	profiler/coreclr/utf16.c \
	profiler/coreclr/factory.c \
	profiler/coreclr/callback.c \
	profiler/coreclr/events.c \
	profiler/coreclr/startup.c \
	profiler/coreclr/record.c \
	profiler/coreclr/elt.c \
	profiler/coreclr/catchup.c \
	profiler/coreclr/allocstack.c \
	profiler/coreclr/heap.c
profiler_libmdprofile_la_SOURCES = $(MDP_CLR_SOURCES)
profiler_libmdprofile_la_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
profiler_libmdprofile_la_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
profiler_libmdprofile_la_LIBADD = profiler/libmdpcore.la libmdtools/libmdtools_core.la \
	$(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) $(ZLIB_LIBS) -ldl -lrt
profiler_libmdprofile_la_LDFLAGS = -module -shared -avoid-version -no-undefined $(MDT_SO_LDFLAGS) \
	$(AX_PTHREAD_CFLAGS) \
	-Wl,--version-script=$(top_srcdir)/profiler/coreclr/exports.map
EXTRA_profiler_libmdprofile_la_DEPENDENCIES = profiler/coreclr/exports.map
EXTRA_DIST += profiler/coreclr/exports.map profiler/README.md profiler/core/README.md \
	bench/profiler/README.md \
	bench/profiler/run.sh bench/profiler/report.py bench/profiler/measure.py \
	bench/profiler/handler.sh bench/profiler/cost.sh bench/profiler/cost.py \
	bench/profiler/webload.py bench/profiler/build.sh bench/profiler/wall.sh \
	bench/profiler/events.sh bench/profiler/alloc.sh bench/profiler/alloc_report.py \
	bench/profiler/lib.sh bench/profiler/sparse.sh
dist_man_MANS += doc/mdprofile.1

# The launcher; --attach goes through the diagnostics IPC client in
# profiler/attach/.
bin_PROGRAMS += profiler/mdprofile
profiler_mdprofile_SOURCES = profiler/mdprofile.c profiler/core/config.c profiler/core/core.h \
	profiler/core/channel.h profiler/core/channel.c profiler/core/hex.h profiler/core/logname.c \
	profiler/launcher/launch.h profiler/launcher/output.c profiler/launcher/logs.c \
	profiler/launcher/run.c profiler/launcher/attach.c
profiler_mdprofile_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler -DMDP_PKGLIBDIR='"$(pkglibdir)"'
profiler_mdprofile_CFLAGS = $(MDT_WARN_CFLAGS)
profiler_mdprofile_LDADD = profiler/attach/libmdpattach.la $(TALLOC_LIBS)

# The drain's cost per sample without a runtime (bench/profiler/README.md,
# "Naming native frames"); run under callgrind.
noinst_PROGRAMS += bench/profiler/drain
bench_profiler_drain_SOURCES = bench/profiler/drain.c
bench_profiler_drain_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
bench_profiler_drain_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
bench_profiler_drain_LDADD = profiler/libmdpcore.la libmdtools/libmdtools_core.la $(TALLOC_LIBS) \
	$(NETTLE_LIBS) $(GMP_LIBS) -ldl -lrt $(AX_PTHREAD_CFLAGS)

# How often a thread's CPU-time timer signals it, beside busy loops
# (bench/profiler/README.md, "The CPU-time timer on a busy machine").
noinst_PROGRAMS += bench/profiler/ticks
bench_profiler_ticks_SOURCES = bench/profiler/ticks.c
bench_profiler_ticks_CFLAGS = $(MDT_WARN_CFLAGS)
bench_profiler_ticks_LDADD = -lrt

# The SIGPROF handler's cost per sample and per frame without a runtime
# (bench/profiler/README.md, "The handler's cost"); run under callgrind.
noinst_PROGRAMS += bench/profiler/handler
bench_profiler_handler_SOURCES = bench/profiler/handler.c
bench_profiler_handler_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
bench_profiler_handler_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
bench_profiler_handler_LDADD = profiler/libmdpcore.la libmdtools/libmdtools_core.la $(TALLOC_LIBS) \
	$(NETTLE_LIBS) $(GMP_LIBS) -ldl -lrt $(AX_PTHREAD_CFLAGS)

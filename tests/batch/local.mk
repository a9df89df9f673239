# tests/batch: libFuzzer harnesses of mdinspect batch (issue 25), included
# from Makefile.am. Each builds, with any compiler, as a replayer of its seed
# corpus that `make check` runs (tests/fuzz/replay.c supplies main()), and
# with --enable-fuzzing (CC=clang) as the real fuzzer, the library and
# batch's files compiled in with the sanitizers. See tests/batch/README.md.
#   fuzz_batchline  the line parser and frame resolver, every format
#   fuzz_batchlog   a whole run on one input: processes, formats, threads

BATCH_FUZZ_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/mdinspect -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(XXHASH_CFLAGS) $(LIBDW_CFLAGS) $(PROTOBUF_C_CFLAGS) \
	$(ZLIB_CFLAGS)
BATCH_FUZZ_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS) $(XXHASH_LIBS) $(LIBDW_LIBS) \
	$(PROTOBUF_C_LIBS) $(ZLIB_LIBS)

check_PROGRAMS += tests/batch/fuzz_batchline_replay tests/batch/fuzz_batchlog_replay
TESTS += tests/batch/fuzz_batchline_replay tests/batch/fuzz_batchlog_replay

tests_batch_fuzz_batchline_replay_SOURCES = tests/fuzz/replay.c tests/batch/fuzz_batchline.c \
	$(MDI_COMMON_SOURCES) $(MDB_BATCH_SOURCES)
tests_batch_fuzz_batchline_replay_CPPFLAGS = $(BATCH_FUZZ_CPPFLAGS) \
	-DREPLAY_DEFAULT_CORPUS='"tests/batch/corpus/batchline"'
tests_batch_fuzz_batchline_replay_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchline_replay_LDFLAGS = $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchline_replay_LDADD = $(BATCH_FUZZ_LDADD)
nodist_tests_batch_fuzz_batchline_replay_SOURCES = $(MDB_BATCH_GENERATED)

tests_batch_fuzz_batchlog_replay_SOURCES = tests/fuzz/replay.c tests/batch/fuzz_batchlog.c \
	$(MDI_COMMON_SOURCES) $(MDB_BATCH_SOURCES)
tests_batch_fuzz_batchlog_replay_CPPFLAGS = $(BATCH_FUZZ_CPPFLAGS) \
	-DREPLAY_DEFAULT_CORPUS='"tests/batch/corpus/batchlog"'
tests_batch_fuzz_batchlog_replay_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchlog_replay_LDFLAGS = $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchlog_replay_LDADD = $(BATCH_FUZZ_LDADD)
nodist_tests_batch_fuzz_batchlog_replay_SOURCES = $(MDB_BATCH_GENERATED)

if ENABLE_FUZZING
noinst_PROGRAMS += tests/batch/fuzz_batchline tests/batch/fuzz_batchlog
tests_batch_fuzz_batchline_SOURCES = tests/batch/fuzz_batchline.c $(MDI_COMMON_SOURCES) $(MDB_BATCH_SOURCES) \
	$(MDT_LIB_SOURCES)
tests_batch_fuzz_batchline_CPPFLAGS = $(BATCH_FUZZ_CPPFLAGS) $(NETTLE_CFLAGS)
tests_batch_fuzz_batchline_CFLAGS = $(MDT_FUZZ_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchline_LDFLAGS = $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchline_LDADD = $(TALLOC_LIBS) $(XXHASH_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) \
	$(ZLIB_LIBS) $(LIBDW_LIBS) $(PROTOBUF_C_LIBS)
nodist_tests_batch_fuzz_batchline_SOURCES = $(MDB_BATCH_GENERATED)

tests_batch_fuzz_batchlog_SOURCES = tests/batch/fuzz_batchlog.c $(MDI_COMMON_SOURCES) $(MDB_BATCH_SOURCES) \
	$(MDT_LIB_SOURCES)
tests_batch_fuzz_batchlog_CPPFLAGS = $(BATCH_FUZZ_CPPFLAGS) $(NETTLE_CFLAGS)
tests_batch_fuzz_batchlog_CFLAGS = $(MDT_FUZZ_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchlog_LDFLAGS = $(AX_PTHREAD_CFLAGS)
tests_batch_fuzz_batchlog_LDADD = $(TALLOC_LIBS) $(XXHASH_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) \
	$(ZLIB_LIBS) $(LIBDW_LIBS) $(PROTOBUF_C_LIBS)
nodist_tests_batch_fuzz_batchlog_SOURCES = $(MDB_BATCH_GENERATED)
endif

# `make fuzz` (tests/fuzz/local.mk) runs each for a fixed time.
FUZZ_RUNS += tests/batch/fuzz_batchline=tests/batch/corpus/batchline
FUZZ_RUNS += tests/batch/fuzz_batchlog=tests/batch/corpus/batchlog

EXTRA_DIST += tests/batch/README.md tests/batch/fuzz_batchline.c tests/batch/fuzz_batchlog.c \
	tests/batch/corpus

# --pprof's files read back by protobuf-c's own decoder (tests/cli/batch-pprof.sh,
# tests/profiler/offline.py): checked and printed as JSON.
check_PROGRAMS += tests/batch/pprof_read
tests_batch_pprof_read_SOURCES = tests/batch/pprof_read.c
nodist_tests_batch_pprof_read_SOURCES = mdinspect/batch/profile.pb-c.c mdinspect/batch/profile.pb-c.h
tests_batch_pprof_read_CPPFLAGS = -I$(top_builddir) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS) \
	$(JANSSON_CFLAGS)
tests_batch_pprof_read_CFLAGS = $(MDT_WARN_CFLAGS)
tests_batch_pprof_read_LDADD = $(PROTOBUF_C_LIBS) $(ZLIB_LIBS) $(JANSSON_LIBS)

# bench/batch: `mdinspect batch` against a libmono peer doing the same
# lookups (bench/batch/README.md, run.sh). Nothing here is installed.
noinst_PROGRAMS += bench/batch/gen
bench_batch_gen_SOURCES = bench/batch/gen.c
bench_batch_gen_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_batch_gen_CFLAGS = $(AM_CFLAGS) -O2
bench_batch_gen_LDFLAGS = -no-install
bench_batch_gen_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

if HAVE_MONO
noinst_PROGRAMS += bench/batch/batch_mono
bench_batch_batch_mono_SOURCES = bench/batch/batch_mono.c
bench_batch_batch_mono_CPPFLAGS = $(MONO_CFLAGS)
bench_batch_batch_mono_CFLAGS = $(AM_CFLAGS) -O2
bench_batch_batch_mono_LDFLAGS = -no-install
bench_batch_batch_mono_LDADD = $(MONO_LIBS)
endif

EXTRA_DIST += bench/batch/run.sh bench/batch/interleave.sh bench/batch/json.sh bench/batch/README.md

# bench: build and test rules (included from Makefile.am).
# The metadata-reading benchmark, mdtools against libmono (bench/README.md).
# Programs link the shared libraries on both sides; -no-install avoids the
# libtool wrapper script so time(1) and valgrind see the real program.
BENCH_CFLAGS = $(AM_CFLAGS) $(MDT_WARN_CFLAGS) -O2

noinst_PROGRAMS += bench/bench_md
bench_bench_md_SOURCES = bench/bench_md.c bench/common.h
bench_bench_md_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_bench_md_CFLAGS = $(BENCH_CFLAGS)
bench_bench_md_LDFLAGS = -no-install
bench_bench_md_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

# What reading files into memory (the default, safe against truncation)
# costs against mapping them (MDT_OPEN_MAP): bench/README.md, "Opening".
noinst_PROGRAMS += bench/bench_open
bench_bench_open_SOURCES = bench/bench_open.c bench/common.h
bench_bench_open_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_bench_open_CFLAGS = $(BENCH_CFLAGS)
bench_bench_open_LDFLAGS = -no-install
bench_bench_open_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

if HAVE_MONO
noinst_PROGRAMS += bench/bench_mono
bench_bench_mono_SOURCES = bench/bench_mono.c bench/common.h
bench_bench_mono_CPPFLAGS = $(MDT_CPPFLAGS) $(MONO_CFLAGS)
bench_bench_mono_CFLAGS = $(BENCH_CFLAGS)
bench_bench_mono_LDFLAGS = -no-install
# libmdtools only for the static schema tables (which columns are heap indexes).
bench_bench_mono_LDADD = libmdtools/libmdtools.la $(MONO_LIBS)
endif

EXTRA_DIST += bench/run.sh bench/compare.sh bench/README.md

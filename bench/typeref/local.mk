# bench/typeref: TypeRef resolution over the Mono 4.5 framework, mdtools
# against libmono and Mono.Cecil (bench/typeref/README.md, run.sh).
noinst_PROGRAMS += bench/typeref/bench_tr
bench_typeref_bench_tr_SOURCES = bench/typeref/bench_tr.c
bench_typeref_bench_tr_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_typeref_bench_tr_CFLAGS = $(AM_CFLAGS) -O2
bench_typeref_bench_tr_LDFLAGS = -no-install
bench_typeref_bench_tr_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

if HAVE_MONO
noinst_PROGRAMS += bench/typeref/bench_tr_mono
bench_typeref_bench_tr_mono_SOURCES = bench/typeref/bench_tr_mono.c
bench_typeref_bench_tr_mono_CPPFLAGS = $(MONO_CFLAGS)
bench_typeref_bench_tr_mono_CFLAGS = $(AM_CFLAGS) -O2
bench_typeref_bench_tr_mono_LDFLAGS = -no-install
bench_typeref_bench_tr_mono_LDADD = $(MONO_LIBS)
endif

EXTRA_DIST += bench/typeref/run.sh bench/typeref/README.md bench/typeref/BenchCecil.cs

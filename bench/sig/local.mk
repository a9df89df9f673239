# bench/sig: decoding and printing every signature of the Mono 4.5
# framework, mdtools against libmono and Mono.Cecil (bench/sig/README.md).
# Included from Makefile.am. -no-install: time(1) and valgrind see the real
# program, not libtool's wrapper.
noinst_PROGRAMS += bench/sig/bench_sig_md
bench_sig_bench_sig_md_SOURCES = bench/sig/bench_sig_md.c bench/sig/sigbench.h
bench_sig_bench_sig_md_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_sig_bench_sig_md_CFLAGS = $(MDT_WARN_CFLAGS) -O2
bench_sig_bench_sig_md_LDFLAGS = -no-install
bench_sig_bench_sig_md_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

if HAVE_MONO
noinst_PROGRAMS += bench/sig/bench_sig_mono
bench_sig_bench_sig_mono_SOURCES = bench/sig/bench_sig_mono.c bench/sig/sigbench.h
bench_sig_bench_sig_mono_CPPFLAGS = $(MONO_CFLAGS)
bench_sig_bench_sig_mono_CFLAGS = $(MDT_WARN_CFLAGS) -O2
bench_sig_bench_sig_mono_LDFLAGS = -no-install
bench_sig_bench_sig_mono_LDADD = $(MONO_LIBS)
endif

EXTRA_DIST += bench/sig/run.sh bench/sig/README.md bench/sig/bench_sig_cecil.cs

# bench/srm: mdtools against System.Reflection.Metadata (bench/srm/README.md,
# run.sh). The C# side (BenchSrm.csproj) is built by run.sh with dotnet into
# the build tree; make builds only the C programs. Nothing here is installed.
noinst_PROGRAMS += bench/srm/bench_names_md
bench_srm_bench_names_md_SOURCES = bench/srm/bench_names_md.c
bench_srm_bench_names_md_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
bench_srm_bench_names_md_CFLAGS = $(MDT_WARN_CFLAGS) -O2
bench_srm_bench_names_md_LDFLAGS = -no-install
bench_srm_bench_names_md_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

EXTRA_DIST += bench/srm/run.sh bench/srm/README.md bench/srm/BenchSrm.csproj \
	bench/srm/Program.cs bench/srm/Cells.cs bench/srm/Names.cs

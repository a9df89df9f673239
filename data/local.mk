# data: fixture assemblies with their sources (data/src, data/sample), the
# scripts that rebuild them (data/build.sh needs Mono's mcs and ilasm), and
# the corpus of unusual binaries (data/corpus). Shipped for `make check`.
EXTRA_DIST += data/README.md data/build.sh data/build-pdb.sh data/build-decl.sh data/decl data/pdb data/facts.sh data/facts.txt data/MultiNotes.txt \
	data/Everything.dll data/Sigs.dll data/Shell.dll data/MultiPart.netmodule data/MultiMain.dll \
	data/MultiIL.dll data/sample data/src data/fwd data/raw data/webcil data/tools data/resources \
	data/corpus

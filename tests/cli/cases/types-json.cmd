# types as JSON: token, kind, visibility, name, metadata_name (and module with -a).
mdinspect -j -c 'types Everything.Outer*; types -a Program' data/Everything.dll

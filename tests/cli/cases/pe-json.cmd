# pe --json: debug entries decoded (CodeView, PDB checksum, deterministic, embedded PDB sizes), the version strings
mdinspect -j -c pe data/pdb/LinesEmbedded.dll

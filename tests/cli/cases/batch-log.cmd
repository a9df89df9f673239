# batch: a profiler log (doc/profile-log.md) in text: stacks with IL offsets -> source lines (side-by-side and embedded PDBs, two documents), special frames, instantiations, alloc types, unresolved frames
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-log.txt

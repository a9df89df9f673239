# batch: a calls-mode log of format 2 (doc/profile-log.md): each call record's leaves, tail calls and unwinds after its count, in text and folded (counts are the enters); a format-1 call line in the same stream is read as format 1
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-calls.txt; mdinspect batch --folded -a data -a data/pdb < tests/cli/inputs/batch-calls.txt

# batch --top on a calls log counts calls, on an alloc log objects and bytes (a table by each)
mdinspect batch --top 3 -a data -a data/pdb < tests/cli/inputs/batch-calls.txt; mdinspect batch --top 3 -a data -a data/pdb < tests/cli/inputs/batch-alloc.txt

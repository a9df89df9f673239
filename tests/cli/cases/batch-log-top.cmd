# batch --top: exclusive and inclusive counts (recursion counted once per stack)
mdinspect batch --top 4 -a data -a data/pdb < tests/cli/inputs/batch-log.txt

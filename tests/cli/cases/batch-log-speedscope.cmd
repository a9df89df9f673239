# batch --speedscope: shared frames (with files and lines), one sampled profile of the distinct stacks
mdinspect batch --speedscope -a data -a data/pdb < tests/cli/inputs/batch-log.txt

# batch --folded: root-first folded stacks with counts, unresolved frames in brackets
mdinspect batch --folded -a data -a data/pdb < tests/cli/inputs/batch-log.txt

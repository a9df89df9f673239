# batch --json: one object per input line, frames leaf first
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-log.txt

# batch: malformed lines are answered in place (text) or on stderr (folded); the stream goes on
mdinspect batch -a data/pdb < tests/cli/inputs/batch-malformed.txt; mdinspect batch --folded -a data/pdb < tests/cli/inputs/batch-malformed.txt

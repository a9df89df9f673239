# batch: malformed lines are answered in place (text) or on stderr (folded); the stream goes on; a record keyword alone (with a CR, before a TAB) is malformed, not a crash
mdinspect batch -a data/pdb < tests/cli/inputs/batch-malformed.txt; mdinspect batch --folded -a data/pdb < tests/cli/inputs/batch-malformed.txt

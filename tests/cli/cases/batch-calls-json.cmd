# batch --json: a format-2 call record's exit counts as "leaves", "tailcalls", "unwinds"; none for a format-1 one; "metadata_name" of each resolved method
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-calls.txt

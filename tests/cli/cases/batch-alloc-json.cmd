# batch --json: the alloc log's special types carry status "unknown" and their reason, like stack frames; "metadata_name" of each resolved type
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-alloc.txt

# batch --json: one object per input line, frames leaf first; "metadata_name" beside every name (a generic method instantiated by the log: Lines.Box`1<System.String>::Convert<System.Int32>, a nested generic class: Lines.Box`1+Inner`1<...>, alloc types as stored)
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-log.txt

# batch text output of a format-4 log: a stack record prints "stack COUNT TID SLICE" then its frames; #thread lines are copied
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-slices.txt

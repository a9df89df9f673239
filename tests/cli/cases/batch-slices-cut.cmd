# batch: a format-4 log cut inside a #thread line: the cut line is malformed, located, the records before it named with the thread; the slices of a log with rate=500 and slice=250 (2 ms a sample, 250 ms a slice)
mdinspect batch --json -a data -a data/pdb < tests/cli/inputs/batch-slices-cut.txt; mdinspect batch --speedscope -a data -a data/pdb < tests/cli/inputs/batch-slices-cut.txt

# batch --speedscope on a format-4 log: one profile per thread, named "NAME (tid N)" or "tid N", in milliseconds (count x 1000/rate), samples in time order with an empty sample for the idle time before each busy slice (a thread first busy at 3 s starts with 3000 ms of nothing)
mdinspect batch --speedscope -a data -a data/pdb < tests/cli/inputs/batch-slices.txt

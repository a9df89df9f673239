# batch: an alloc-mode log whose types include ones the profiler could not describe (arrays of pointers, classes of unloaded or MVID-less modules): those stay special frames, every line resolves, exit 0
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-alloc.txt

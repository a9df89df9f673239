# batch: --recursive finds modules in subfolders (fwd/Real.dll under data/)
mdinspect batch -a data < tests/cli/inputs/batch-recursive.txt; mdinspect batch -a data --recursive < tests/cli/inputs/batch-recursive.txt

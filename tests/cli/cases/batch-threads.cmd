# batch: --threads takes 1 to 64; 2 and 5 threads print batch-plain.out, line for line
mdinspect batch --threads 0; mdinspect batch -t 65; mdinspect batch -t x; mdinspect batch -t 2 -a data -a data/pdb < tests/cli/inputs/batch-plain.txt; mdinspect batch --threads=5 -a data -a data/pdb < tests/cli/inputs/batch-plain.txt

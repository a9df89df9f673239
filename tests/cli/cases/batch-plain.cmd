# batch: PATH TOKEN and MVID TOKEN [DESCRIPTOR...] lines of every naming table, with PDB lines, and every way they fail (one output line per input line, exit 1)
mdinspect batch -a data -a data/pdb < tests/cli/inputs/batch-plain.txt

# The portable PDB in JSON: PE and CLI fields null, pdb_* fields set.
mdinspect -j data/corpus/asmresolver/TheAnswer.pdb

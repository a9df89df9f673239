# Portable PDB tables (0x30-0x37) and their indexes into the PE's tables.
mdinspect -c 'dump Document; dump MethodDebugInformation; dump LocalScope; dump ImportScope' data/corpus/asmresolver/TheAnswer.pdb

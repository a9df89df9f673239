# Portable PDB tables (0x30-0x37) and their indexes into the PE's tables; a Document's Name is the path its name blob spells (in dump, token and JSON).
mdinspect -c 'dump Document; dump MethodDebugInformation; dump LocalScope; dump ImportScope; token 0x30000002' data/corpus/asmresolver/TheAnswer.pdb; mdinspect -j -c 'dump Document 1 1' data/corpus/asmresolver/TheAnswer.pdb

# A portable PDB (raw metadata): no PE fields, the #Pdb stream's id and entry point, no Assembly row.
mdinspect data/corpus/asmresolver/TheAnswer.pdb

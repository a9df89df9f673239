# Summary of a plain IL-only PE32 executable: headers, identity, debug directory (CodeView, portable PDB), streams, tables.
mdinspect data/corpus/asmresolver/HelloWorld.exe

# tables: id, name, rows, row size, and sortedness where the standard requires it.
mdinspect -c tables data/corpus/asmresolver/HelloWorld.exe

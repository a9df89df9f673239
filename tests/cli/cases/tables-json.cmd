# tables as JSON Lines: one object per table.
mdinspect --json -c tables data/corpus/asmresolver/HelloWorld.exe

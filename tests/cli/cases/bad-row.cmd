# Row 0 and a non-number are usage errors; so are too many arguments.
mdinspect -c 'dump TypeDef 0' data/corpus/asmresolver/HelloWorld.exe; mdinspect -c 'dump TypeDef x' data/corpus/asmresolver/HelloWorld.exe; mdinspect -c 'dump TypeDef 1 2 3' data/corpus/asmresolver/HelloWorld.exe; mdinspect -c 'dump' data/corpus/asmresolver/HelloWorld.exe

# FROM after TO fails at run time (exit 1).
mdinspect -c 'dump TypeDef 2 1' data/corpus/asmresolver/HelloWorld.exe

# A number that is no table id.
mdinspect -c 'dump 0x2d' data/corpus/asmresolver/HelloWorld.exe

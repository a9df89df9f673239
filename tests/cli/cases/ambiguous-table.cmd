# A table prefix that matches several tables lists them.
mdinspect -c 'dump Method' data/corpus/asmresolver/HelloWorld.exe

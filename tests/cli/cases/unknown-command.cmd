# An unknown command is a usage error; nothing runs (tables is not printed).
mdinspect -c 'tables; frobnicate' data/corpus/asmresolver/HelloWorld.exe

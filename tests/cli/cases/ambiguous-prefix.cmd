# 's' and 'st' match streams and strings: the candidates are listed.
mdinspect -c 's' data/corpus/asmresolver/HelloWorld.exe; mdinspect -c 'st' data/corpus/asmresolver/HelloWorld.exe

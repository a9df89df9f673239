# Usage errors exit 2: no FILE, a command needing an image without FILE, bad options, unterminated quote.
mdinspect; mdinspect -c tables; mdinspect -x data/corpus/asmresolver/HelloWorld.exe; mdinspect --bogus; mdinspect -c; mdinspect -c "dump 'TypeDef" data/corpus/asmresolver/HelloWorld.exe

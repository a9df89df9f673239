# An unknown table name is a usage error (exit 2) found before anything runs.
mdinspect -c 'tables; dump Foo' data/corpus/asmresolver/HelloWorld.exe

# Several files in JSON: one summary object per image that opened, errors on stderr, exit 1.
mdinspect --json data/corpus/asmresolver/HelloWorld.exe data/corpus/no-such-file.exe data/corpus/dnfile/hello-world.exe

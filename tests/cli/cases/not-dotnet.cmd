# A native PE: the located error on stderr, exit 1.
mdinspect data/corpus/asmresolver/NativeHelloWorldC.x64.exe

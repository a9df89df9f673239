# Several files, one missing and one not .NET: each good file is summarised in order, exit 1.
mdinspect -c tables data/corpus/asmresolver/HelloWorld.exe data/corpus/no-such-file.exe data/corpus/asmresolver/NativeHelloWorldC.x64.exe data/corpus/dnfile/hello-world.exe

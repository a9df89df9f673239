# Several dumps in one -c: blobs, GUIDs (nil for index 0), simple and coded indexes, table ids and any-case names.
mdinspect -c 'dump Module; dump typeref; dump MethodDef; dump Param; dump 0x0a; dump CustomAttribute; dump Assembly; dump AssemblyRef' data/corpus/asmresolver/HelloWorld.exe

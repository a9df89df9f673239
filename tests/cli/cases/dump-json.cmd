# dump as JSON Lines: table, row, token, then one field per column (blobs and ranges as objects, nil GUIDs null).
mdinspect -j -c 'dump Module; dump TypeDef; dump MethodDef; dump AssemblyRef' data/corpus/asmresolver/HelloWorld.exe

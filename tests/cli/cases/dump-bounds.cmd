# FROM and TO: a middle slice, FROM alone (to the end), TO past the end (clipped), FROM past the end (nothing).
mdinspect -c 'dump TypeRef 3 5; dump TypeRef 12; dump MemberRef 11 100; dump TypeDef 5' data/corpus/asmresolver/HelloWorld.exe

# FROM and TO: a middle slice, FROM alone (to the end), TO past the end (clipped), FROM past the end (fails as `token` does for a missing row: exit 1, same message).
mdinspect -c 'dump TypeRef 3 5; dump TypeRef 12; dump MemberRef 11 100; dump TypeDef 5' data/corpus/asmresolver/HelloWorld.exe; mdinspect -c 'token 0x02000005' data/corpus/asmresolver/HelloWorld.exe

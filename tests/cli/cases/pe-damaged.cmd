# pe on damaged Win32 resource trees (a directory loop, a directory offset past the tree): the rest is shown, the resource part is a located error, exit 1; a Webcil payload has no PE headers
mdinspect -c pe data/corpus/asmresolver/HelloWorld.MaliciousWin32ResLoop.exe; mdinspect -c pe data/corpus/asmresolver/HelloWorld.MaliciousWin32ResDirOffset.exe; mdinspect -c pe data/webcil/Hello.v0.webcil

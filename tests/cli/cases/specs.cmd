# typespecs and methodspecs of data/Sigs.dll and data/Everything.dll; a module with none.
mdinspect -c 'typespecs; methodspecs' data/Sigs.dll data/Everything.dll data/sample/Hello.exe

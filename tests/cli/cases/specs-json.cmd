# typespecs and methodspecs as JSON.
mdinspect -j -c 'typespecs; methodspecs' data/Sigs.dll

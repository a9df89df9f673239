# heap as JSON Lines.
mdinspect -j -c 'heap strings 0x1a; heap us 1; heap blob 0x10; heap guid 1; heap us' data/sample/Hello.exe

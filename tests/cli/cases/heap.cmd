# heap shows one entry of each heap (string, user string, blob as hex dump, GUID by index), or lists a heap.
mdinspect -c 'heap strings 0x1a; heap us 1; heap blob 1; heap guid 1; heap us; heap guid; heap blob' data/sample/Hello.exe

# heap: an offset past the heap, a GUID index 0 or past the end, an unknown heap name, a bad number.
mdinspect -c 'heap strings 0x10000; heap guid 0; heap guid 2; heap blob 0xffff' data/sample/Hello.exe; mdinspect -c 'heap text 1' data/sample/Hello.exe; mdinspect -c 'heap us xyz' data/sample/Hello.exe

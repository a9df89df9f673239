# type: unknown name, a token of another table, an ambiguous name (case-insensitive last resort).
mdinspect -c 'type Nope' data/Everything.dll; mdinspect -c 'type 0x06000001' data/Everything.dll; mdinspect -c 'type Everything.Outer+middle' data/Everything.dll; mdinspect -c 'type 0x02000999' data/Everything.dll

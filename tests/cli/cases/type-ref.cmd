# type with a TypeRef or TypeSpec token shows what it names; the friendly style names generic parameters in signatures.
mdinspect -c 'type 0x01000017; type 0x1b000002; set style friendly; type Everything.Pair' data/Everything.dll

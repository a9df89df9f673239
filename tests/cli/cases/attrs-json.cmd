# attrs as JSON: fixed and named arguments (kind field/property), and an attribute that does not decode (error).
mdinspect -j -c 'attrs 0x0200000a; attrs 0x02000004; attrs 0x00000001' data/Everything.dll

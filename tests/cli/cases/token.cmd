# token: a TypeDef, a method with signature and owner, a parameter (owner: its method), a custom attribute (owner: its parent), a user string, a MethodSpec, a TypeSpec.
mdinspect -c 'token 0x0200000a; token 0x06000002; token 0x08000002; token 0x0c000001; token 0x70000001; token 0x2b000001; token 0x1b000003' data/Everything.dll

# token as JSON: columns as an object, owner and owner_name, signature.
mdinspect -j -c 'token 0x06000002; token 0x04000010; token 0x70000001; token 0x23000001' data/Everything.dll

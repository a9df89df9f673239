# ExportedType, Module and Assembly tokens are named by the library: nesting
# through the Implementation chain, [module X], the display name.
mdinspect -c 'token 0x27000004; token 0x27000005; token 0x00000001; token 0x20000001' data/fwd/v2/Lib.dll

# A declaration's constraints in JSON: "declaration" of the type and of
# each method, the AllowByRefLike flag (0x20) by name.
mdinspect -j -c 'type Decl.Holder`6' data/decl/Decl.dll

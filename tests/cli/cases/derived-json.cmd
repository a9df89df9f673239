# derived in JSON: one record for the type asked about, "derived" its list
# (module, token, relation, depth and parent with -a, name, metadata_name,
# via: the TypeDef or InterfaceImpl row that names the parent).
mdinspect -j -c 'derived -a Decl.Shape; derived Decl.IOrdered`1' data/decl/Decl.dll

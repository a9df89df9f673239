# Declarations with every kind of constraint (data/decl/Decl.dll, Roslyn):
# class, struct, new(), allows ref struct (GenericParam flag 0x20),
# unmanaged, interface constraints naming the parameter, variance, on a
# type's and a method's parameters, in the four styles; parameters by name
# in constraint and interface lists (`!T` in IL, as ILDasm writes them).
mdinspect -c 'type Decl.Holder`6; type Decl.Ordered`1; type Decl.IConverter`2; set style il; type Decl.Holder`6; token Decl.Ordered`1; type Decl.IConverter`2; set style reflection; type Decl.Holder`6; type Decl.Ordered`1; set style friendly; type Decl.Holder`6; type Decl.IOrdered`1' data/decl/Decl.dll

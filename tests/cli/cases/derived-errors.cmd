# derived: a type no open module defines, a token of another table, a
# TypeSpec (a generic instance: its definition is asked for instead), a
# TypeRef that resolves nowhere (the framework is not open), no argument.
mdinspect -c 'derived Nope' data/decl/Decl.dll; mdinspect -c 'derived 0x06000001' data/decl/Decl.dll; mdinspect -c 'derived 0x1b000001' data/decl/Decl.dll; mdinspect -c 'derived 0x0100000d' data/decl/Decl.dll; mdinspect -c 'derived' data/decl/Decl.dll

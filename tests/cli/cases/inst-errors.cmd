# inst errors: a MemberRef on a TypeRef, a MethodDef, a row beyond the table, no module open.
mdinspect -c 'inst 0x0a000001; inst 0x06000001; inst 0x1b000063' data/Sigs.dll; printf 'inst 0x1b000001\n' | mdinspect -i

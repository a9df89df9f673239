# attrs: a type with two InfoAttributes (fixed and named arguments, enums, typeof, arrays, boxed values), the assembly (a null array and a null boxed object), a Param, a field by name, in the full and friendly styles.
mdinspect -c 'attrs 0x0200000a; attrs 0x20000001; attrs 0x0800003c; attrs Everything.Consts::Dec; set style friendly; attrs 0x0200000a' data/Everything.dll

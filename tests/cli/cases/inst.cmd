# inst: a nested generic TypeSpec, a MethodSpec, a member of a generic instance, in the full, reflection and friendly styles.
mdinspect -c 'inst 0x1b00000c; inst 0x2b000002; inst 0x0a000006; set style reflection; inst 0x1b00000c; set style friendly; inst 0x2b000002' data/Sigs.dll

# inst as JSON.
mdinspect -j -c 'inst 0x1b00000b; inst 0x2b000001; inst 0x0a000005' data/Sigs.dll

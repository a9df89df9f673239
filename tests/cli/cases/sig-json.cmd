# sig as JSON.
mdinspect -j -c 'sig 0x06000003; sig 0x04000005; sig 0x2b000001' data/Sigs.dll

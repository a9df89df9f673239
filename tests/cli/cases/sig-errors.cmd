# sig errors: a token without a signature, a row beyond the table, a user string, no argument.
mdinspect -c 'sig 0x02000001; sig 0x06000063; sig 0x70000001' data/Sigs.dll; mdinspect -c 'sig' data/Sigs.dll

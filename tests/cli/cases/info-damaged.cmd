# #~ cut short: the Assembly row is unreadable, shown in place, reported, exit 1; the warnings say why.
mdinspect tests/cli/inputs/cut-tables.exe

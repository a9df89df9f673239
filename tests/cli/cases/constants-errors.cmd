# constants errors: a Constant row whose Value is the empty blob (an int32 needs 4 bytes; AsmResolver test input); a module without constants; no module open.
mdinspect -c constants data/corpus/asmresolver/ConstantZeroValueColumn.exe; mdinspect -c constants data/Sigs.dll; printf 'constants\n' | mdinspect -i

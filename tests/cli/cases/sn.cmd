# sn: a signed fixture verifies; an unsigned one, a module, a raw metadata blob say why there is nothing to check; info's signature line
mdinspect -c sn data/Everything.dll data/sample/Hello.exe; mdinspect -c sn data/corpus/asmresolver/MyModel.netmodule data/raw/Everything.md; mdinspect -c info data/fwd/Real.dll

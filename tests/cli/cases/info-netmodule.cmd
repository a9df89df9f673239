# A .netmodule: no Assembly row, said so in text and null in JSON.
mdinspect data/corpus/asmresolver/MyModel.netmodule; mdinspect -j data/corpus/asmresolver/MyModel.netmodule

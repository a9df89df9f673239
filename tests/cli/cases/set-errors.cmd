# set: an unknown setting (usage error), an unknown value (failure).
mdinspect -c 'set colour on' data/Everything.dll; mdinspect -c 'set style pretty; set format yaml' data/Everything.dll

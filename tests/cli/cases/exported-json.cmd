# exported as JSON.
mdinspect -j -c exported data/fwd/v2/Lib.dll

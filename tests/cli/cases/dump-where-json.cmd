# dump where as JSON.
mdinspect -j -c 'dump CustomAttribute where Parent=0x02000004' data/Everything.dll

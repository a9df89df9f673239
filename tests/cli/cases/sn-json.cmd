# sn --json, and --sn-keys refusing what is no regular file
mdinspect -j -c sn data/fwd/v2/Lib.dll; mdinspect --sn-keys data -c sn data/Everything.dll

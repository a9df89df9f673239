# strings: every non-empty #Strings entry with its offset.
mdinspect -c strings data/corpus/dnfile/hello-world.exe

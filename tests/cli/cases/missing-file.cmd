# A file that does not exist.
mdinspect data/corpus/no-such-file.exe

# streams on an image with duplicate streams: the unused ones say so.
mdinspect -c streams data/corpus/dnfile/duplicate-stream.exe; mdinspect -j -c streams data/corpus/dnfile/duplicate-stream.exe

# Duplicate and unknown streams: the unused ones are marked and every open warning is listed.
mdinspect data/corpus/asmresolver/HelloWorld.SchemaStream.exe data/corpus/dnfile/unknown-stream.exe

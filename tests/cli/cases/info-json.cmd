# The same summary as one JSON object: every documented field, null where it does not apply.
mdinspect --json data/corpus/asmresolver/HelloWorld.exe

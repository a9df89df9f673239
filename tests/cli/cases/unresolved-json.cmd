# unresolved as JSON: the forwarder-loop trio of the corpus.
printf 'unresolved --all\n' | mdinspect -j -i data/corpus/asmresolver/HelloWorld_MaliciousExportedTypeLoop.exe data/corpus/asmresolver/Assembly1_MaliciousExportedTypeLoop.dll data/corpus/asmresolver/Assembly2_MaliciousExportedTypeLoop.dll

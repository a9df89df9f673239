# memberrefs as JSON, over a corpus set with forwarders.
printf 'memberrefs\n' | mdinspect -j -i data/corpus/asmresolver/HelloWorld_Forwarder.exe data/corpus/asmresolver/Assembly1_Forwarder.dll data/corpus/asmresolver/Assembly2_Actual.dll

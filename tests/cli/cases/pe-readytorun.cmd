# pe: a ReadyToRun image's header, flags and sections
mdinspect -c pe data/corpus/asmresolver/HelloWorld.ReadyToRun.dll

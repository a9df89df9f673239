# PE32+ with a ReadyToRun header (version read from the RTR header).
mdinspect data/corpus/asmresolver/HelloWorld.ReadyToRun.dll

# ARM64 machine and vtable fixups of a mixed-mode image.
mdinspect -c info data/corpus/asmresolver/MixedModeHelloWorld.Arm64.exe

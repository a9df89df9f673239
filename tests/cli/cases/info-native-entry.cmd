# Mixed-mode C++/CLI DLL: NATIVE_ENTRYPOINT, so the entry point is an RVA; a POGO debug entry.
mdinspect data/corpus/dnfile/EmptyClass_amd64.dll

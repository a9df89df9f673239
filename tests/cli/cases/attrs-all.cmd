# attrs without a token: all 47 custom attributes of the module with their parents; enums of mscorlib types cannot be sized without mscorlib open, so those rows show the error and the command fails.
mdinspect -c 'attrs' data/Everything.dll

# -i opens the FILEs as one set and reads commands (here from stdin); a FILE that fails makes the exit status 1.
printf 'modules\nuse Sigs\ninfo\n' | mdinspect -i data/sample/Hello.exe data/Sigs.dll; printf 'modules\n' | mdinspect -i data/sample/Hello.exe data/nope.dll

# close closes the current module (the first of the others becomes current), a named one, or all; closing nothing fails.
mdinspect -c 'open data/Everything.dll data/Sigs.dll data/sample/Hello.exe; close; modules; close Hello; modules; close -a; modules; close'

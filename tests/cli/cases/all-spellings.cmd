# "All modules" is -a or --all on every command that has it (types, typerefs, memberrefs, unresolved, validate, close); help and usage show both.
mdinspect -c 'open data/sample/Hello.exe data/Shell.dll; types --all Item1*; types -a Item1*; unresolved --all; unresolved -a; help typerefs; close --all'

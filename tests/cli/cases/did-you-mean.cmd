# A mistyped command or table name: the closest names within one or two edits (transpositions count as one); no suggestion for a word that is nothing like one.
mdinspect -c 'tyeps' data/Shell.dll; mdinspect -c 'typs' data/Shell.dll; mdinspect -c 'dump TypDef' data/Shell.dll; mdinspect -c 'help valdate'; mdinspect -c 'frobnicate' data/Shell.dll

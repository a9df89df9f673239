# il -a --ilasm: a module whole as ILAsm source (Shell.dll: assembly refs, classes, quoted names, properties, generic constraints), then --ilasm without -a, refused.
mdinspect -c 'il -a --ilasm; il --ilasm Shell.Widget' data/Shell.dll

# type: a generic class with constraints on its parameters; a nested generic; arity left out.
mdinspect -c 'type Everything.Constrained; type Everything.Outer+Generic+Leaf' data/Everything.dll

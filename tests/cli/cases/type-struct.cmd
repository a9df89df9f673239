# type: structs with sequential and explicit layout (ClassLayout pack and size), an enum with its literal fields, a delegate, an interface.
mdinspect -c 'type Everything.Packed; type Everything.Union; type Everything.Color; type Everything.Transform; type Everything.IShape' data/Everything.dll

# type: a class with interfaces, fields, methods, properties and events.
mdinspect -c 'type Everything.Circle' data/Everything.dll

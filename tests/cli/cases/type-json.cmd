# type as JSON: nested lists of generic_params, interfaces, nested, fields, methods, properties, events.
mdinspect -j -c 'type Everything.Pair; type Everything.Outer' data/Everything.dll

# resources NAME: a resource set's entries (strings, primitives, a byte array, a serialised user type; a long string cut in text), a binary, a linked resource, a name that is not there (exit 1)
mdinspect -c 'resources Res.Strings.resources; resources Res.Logo.bin; resources Res.Linked.txt; resources Nope.txt' data/resources/Res.dll

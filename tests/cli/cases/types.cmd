# types: all types by name (generic parameters after the name), a glob on the simple name, on the full name, without the arity; case ignored for a lower-case glob.
mdinspect -c 'types; types *Attribute; types Everything.Outer*; types Pair; types circle' data/Everything.dll

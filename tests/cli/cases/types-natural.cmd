# Natural order: numbers inside names by value (Item2, Item10, Item12, Item1000); names differing only in their arity print apart (Action, Action<T>, Action<T1,T2>); `0 and a leading zero are part of the name; a suffix without GenericParam rows gives <>, GenericParam rows without a suffix their names.
mdinspect -c 'types Shell.Names.*' data/Shell.dll

# type NAME in C#'s form: a nested type after its enclosing generic or plain type with '.', its innermost names alone, a namespace with '.' throughout
mdinspect -c "type 'Generic<T>.Leaf<U>'; type Innermost; type 'Inner.Innermost'; type 'Everything.Outer.Middle'; type Leaf" data/Everything.dll

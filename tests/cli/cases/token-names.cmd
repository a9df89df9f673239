# token by name: a type, Type::member (every overload, a property), a nested type.
mdinspect -c 'token Everything.Outer+Middle; token Everything.InfoAttribute::.ctor; token Everything.Circle::Radius' data/Everything.dll

# derived: the types that extend or implement a type (data/decl/Decl.dll):
# a base class, an interface implemented directly and through bases (-a,
# with depth and parent), a generic definition its instantiations count
# for (IntBox : Box<int>, NestedBox : Box<Box<string>>, Outer<T>.Inner :
# Box<T>), a variant interface, the friendly style.
mdinspect -c 'derived Decl.Shape; derived -a Decl.IShape; derived Decl.Box`1; derived Decl.IConverter`2; set style friendly; derived -a IOrdered<T>' data/decl/Decl.dll

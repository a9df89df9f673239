// Lib.v1.cs: version 1.0.0.0 of assembly Lib, which still defines its types.
// Client.exe is compiled against this one. Built by data/build.sh:
//   mcs -target:library -deterministic -keyfile:src/test.snk -out:fwd/v1/Lib.dll src/fwd/Lib.v1.cs
using System.Reflection;

[assembly: AssemblyVersion("1.0.0.0")]

namespace Fwd
{
    public class Widget
    {
        public int Size;
        public static string Origin() { return "Lib v1"; }
    }

    public class Outer
    {
        public class Inner
        {
            public class Deeper { }
            public int Value;
        }
    }

    public class Box<T>
    {
        public T Item;
    }

    public class Chained
    {
        public string Where() { return "Lib v1"; }
    }

    public class Stays
    {
        public static int Version() { return 1; }
    }
}

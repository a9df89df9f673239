// Real.cs: where the types of Lib v1 live after the move. Lib v2 (a facade)
// forwards them here; Real itself forwards Fwd.Chained on to Final.
// Built by data/build.sh (signed with src/test.snk, as a signed Lib v2 must
// reference signed assemblies only):
//   mcs -target:library -deterministic -keyfile:src/test.snk -r:fwd/Final.dll
//       -out:fwd/Real.dll src/fwd/Real.cs
//
// build.sh also compiles this file once with -define:CHAINED_HERE into a
// scratch directory and compiles Lib v2 against that copy: mcs resolves a
// forwarded type to its final home, so against the real Real.dll it would
// write Lib v2's forwarder for Fwd.Chained straight to Final, and there
// would be no two-hop chain.
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("1.0.0.0")]
#if !CHAINED_HERE
[assembly: TypeForwardedTo(typeof(Fwd.Chained))]
#endif

namespace Fwd
{
    public class Widget
    {
        public int Size;
        public static string Origin() { return "Real"; }
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

#if CHAINED_HERE
    public class Chained
    {
        public string Where() { return "Real (scratch copy, never shipped)"; }
    }
#endif
}

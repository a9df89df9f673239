// Chain.cs: the four assemblies of the forwarder chains (Hop0 .. Hop3) and
// the scratch copies clients are compiled against. data/resolve/build.sh
// compiles it with one of:
//   -define:DEF3     Hop3: defines Plain, Gen<T>, Outer(+Inner+Deeper)
//   -define:DEF_TWO  Hop2: defines Two, forwards the other three to Hop3
//   -define:FWD_ALL  Hop1, Hop0: forwards all four to the assembly it was
//                    compiled against (a scratch copy that defines them)
//   -define:DEF_ALL  scratch copies: define all four
// Chains: Plain, Gen`1, Outer/Inner/Deeper go Hop0 -> Hop1 -> Hop2 -> Hop3
// (3 hops); Two goes Hop0 -> Hop1 -> Hop2 (2 hops).
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("1.0.0.0")]

#if FWD_ALL || DEF_TWO
[assembly: TypeForwardedTo(typeof(Chain.Plain))]
[assembly: TypeForwardedTo(typeof(Chain.Gen<>))]
[assembly: TypeForwardedTo(typeof(Chain.Outer))]
#endif
#if FWD_ALL
[assembly: TypeForwardedTo(typeof(Chain.Two))]
#endif

namespace Chain {
#if DEF3 || DEF_ALL
    public class Plain {
        public int Value;
        public Plain() { }
        public int Add(int a, int b) { return a + b + Value; }
    }
    public class Gen<T> {
        public T Item;
        public static Gen<T> Make(T item) { Gen<T> g = new Gen<T>(); g.Item = item; return g; }
        public T Get() { return Item; }
    }
    public class Outer {
        public class Inner {
            public int X;
            public class Deeper {
                public string S;
            }
        }
    }
#endif
#if DEF_TWO || DEF_ALL
    public class Two {
        public static int Id(int x) { return x; }
    }
#endif
}

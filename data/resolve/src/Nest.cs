// Nest.cs: types nested four deep. build.sh defines DEF (NestReal, and the
// scratch NestFwd clients are compiled against) or FWD (the shipped
// NestFwd, which forwards Deep.L1, and with it every type nested in it, to
// NestReal). Two nested types are both named Leaf, under different
// enclosing types: a resolver must tell them apart by their enclosing type.
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("1.0.0.0")]
#if FWD
[assembly: TypeForwardedTo(typeof(Deep.L1))]
[assembly: TypeForwardedTo(typeof(Deep.Other))]
#endif

namespace Deep {
#if DEF
    public class L1 {
        public class L2 {
            public class L3 {
                public class L4 { public int Depth = 4; }
            }
            public class Leaf { public int Where = 2; }
        }
    }
    public class Other {
        public class Leaf { public string Where = "other"; }
    }
#endif
}

// Cycle.cs: forwarder cycles. data/resolve/build.sh compiles it with
//   -define:DEF_TWO / DEF_THREE / DEF_SELF   scratch copies defining the type
//   -define:FWD_TWO / FWD_THREE / FWD_SELF   forwarders to the assembly the
//                                            file is compiled against
// CycA and CycB forward Loop.Two to each other; Cyc3A -> Cyc3B -> Cyc3C ->
// Cyc3A forward Loop.Three; SelfFwd forwards Loop.Self to an assembly named
// SelfFwX, which tools/patch-md.py then renames SelfFwd (itself): no
// compiler writes a self-forward.
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("1.0.0.0")]

#if FWD_TWO
[assembly: TypeForwardedTo(typeof(Loop.Two))]
#endif
#if FWD_THREE
[assembly: TypeForwardedTo(typeof(Loop.Three))]
#endif
#if FWD_SELF
[assembly: TypeForwardedTo(typeof(Loop.Self))]
#endif

namespace Loop {
#if DEF_TWO
    public class Two { }
#endif
#if DEF_THREE
    public class Three { }
#endif
#if DEF_SELF
    public class Self { }
#endif
}

// Lib.v2.cs: version 2.0.0.0 of assembly Lib, a facade. Every type of v1
// except Fwd.Stays moved to Real.dll; the [TypeForwardedTo] attributes
// become ExportedType rows whose Implementation is the AssemblyRef to Real
// (nested types forwarded with their enclosing type get ExportedType rows
// whose Implementation is the enclosing type's ExportedType row).
// Fwd.Chained is forwarded to Real, which forwards it again to Final.
// Built by data/build.sh against a scratch build of Real.cs that defines
// Fwd.Chained itself (see the note in Real.cs):
//   mcs -target:library -deterministic -keyfile:src/test.snk -r:SCRATCH/Real.dll
//       -out:fwd/v2/Lib.dll src/fwd/Lib.v2.cs
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("2.0.0.0")]
[assembly: TypeForwardedTo(typeof(Fwd.Widget))]
[assembly: TypeForwardedTo(typeof(Fwd.Outer))]
[assembly: TypeForwardedTo(typeof(Fwd.Box<>))]
[assembly: TypeForwardedTo(typeof(Fwd.Chained))]

namespace Fwd
{
    public class Stays
    {
        public static int Version() { return 2; }
    }
}

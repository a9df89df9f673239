// Final.cs: end of a two-hop forwarder chain. Lib v2 forwards Fwd.Chained
// to Real, and Real forwards it here. Built by data/build.sh:
//   mcs -target:library -deterministic -keyfile:src/test.snk -out:fwd/Final.dll src/fwd/Final.cs
using System.Reflection;

[assembly: AssemblyVersion("1.0.0.0")]

namespace Fwd
{
    public class Chained
    {
        public string Where() { return "Final"; }
    }
}

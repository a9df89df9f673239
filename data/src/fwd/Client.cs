// Client.cs: compiled against Lib 1.0.0.0 (fwd/v1/Lib.dll), so its TypeRefs
// name [Lib]Fwd.Widget etc. Resolving them against Lib 2.0.0.0
// (fwd/v2/Lib.dll) must follow the forwarders to Real.dll, and for
// Fwd.Chained on to Final.dll. Built by data/build.sh:
//   mcs -target:exe -deterministic -r:fwd/v1/Lib.dll -out:fwd/Client.exe src/fwd/Client.cs
using System;
using Fwd;

namespace FwdClient
{
    public static class Program
    {
        public static int Main()
        {
            var w = new Widget();
            w.Size = 3;
            var i = new Outer.Inner();
            var d = new Outer.Inner.Deeper();
            var b = new Box<int>();
            b.Item = i.Value;
            Console.WriteLine(Widget.Origin() + " " + new Chained().Where() + " " + Stays.Version());
            return w.Size + b.Item + (d == null ? 1 : 0);
        }
    }
}

// ChainClient.cs: compiled against a scratch Hop0 that still defines every
// Chain type; at run time (and in the module set) Hop0 only forwards them.
using Chain;

namespace ChainUser {
    public static class Program {
        public static int Main() {
            Plain p = new Plain();
            p.Value = 1;
            Gen<int> g = Gen<int>.Make(p.Add(2, 3));
            Outer.Inner.Deeper d = new Outer.Inner.Deeper();
            d.S = "deep";
            Outer.Inner i = new Outer.Inner();
            i.X = g.Get();
            return Two.Id(i.X) + d.S.Length;
        }
    }
}

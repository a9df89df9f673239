// NestClient.cs: TypeRefs nested four deep (L1/L2/L3/L4) and two nested
// TypeRefs both named Leaf, all scoped by AssemblyRef NestFwd.
namespace NestUser {
    public static class Program {
        public static int Main() { return Use(); }
        public static int Use() {
            Deep.L1.L2.L3.L4 d = new Deep.L1.L2.L3.L4();
            Deep.L1.L2.Leaf a = new Deep.L1.L2.Leaf();
            Deep.Other.Leaf b = new Deep.Other.Leaf();
            return d.Depth + a.Where + b.Where.Length;
        }
    }
}

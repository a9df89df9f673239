// MMPart.cs: the second module of the multi-module assembly MM
// (mcs -target:module).
namespace Multi2 {
    public class Part {
        public static int Twice(int x) { return 2 * x; }
        public static int Sum(int n, __arglist) { return n + new System.ArgIterator(__arglist).GetRemainingCount(); }
        public class Nested { public int N; }
    }
    public interface IPart { int Serve(int x); }
}

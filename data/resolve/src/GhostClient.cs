// GhostClient.cs: references a type that exists (Ghost.Here), one that
// exists nowhere (Ghost.Missing) and one in an assembly that is not in any
// module set (Gone.Thing in Absent).
namespace GhostUser {
    public static class Program {
        public static int Main() { return Use().Length; }
        public static object[] Use() {
            return new object[] { new Ghost.Here(), new Ghost.Missing(), new Gone.Thing() };
        }
    }
}

// CycleClient.cs: references one type of each cycle (compiled against
// scratch copies of CycA, Cyc3A and SelfFwd that define them).
namespace CycleUser {
    public static class Program {
        public static int Main() { return All().Length; }
        public static object[] All() {
            return new object[] { new Loop.Two(), new Loop.Three(), new Loop.Self() };
        }
    }
}

// VerClient.cs: one client per Ver it is compiled against; build.sh
// defines C10, C20, C15, C12, C30 or CNOKEY. Each names Common and the
// types only that version (and some others) define.
namespace VerUser {
    public static class Program {
        public static int Main() { return Use().Length; }
        public static object[] Use() {
            return new object[] {
                Versioned.Common.Which(),
#if C10 || C12 || CNOKEY
                new Versioned.Only10(),
#endif
#if C12
                new Versioned.Only12(),
#endif
#if C15 || C30
                new Versioned.Only15(),
#endif
#if C20
                new Versioned.Only20(),
#endif
#if C30
                new Versioned.Only30(),
#endif
            };
        }
    }
}

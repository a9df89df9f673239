// Ver.cs: assemblies named Ver in several versions and keys. build.sh
// defines one of V10, V20, V15 (shipped: 1.0 and 2.0 signed with
// data/src/test.snk, 1.5 with src/other.snk) or V12, V30, V10NOKEY (scratch
// copies the clients are compiled against: 1.2 and 3.0 with test.snk, 1.0
// unsigned).
using System.Reflection;

#if V10 || V10NOKEY
[assembly: AssemblyVersion("1.0.0.0")]
#elif V12
[assembly: AssemblyVersion("1.2.0.0")]
#elif V15
[assembly: AssemblyVersion("1.5.0.0")]
#elif V20
[assembly: AssemblyVersion("2.0.0.0")]
#elif V30
[assembly: AssemblyVersion("3.0.0.0")]
#endif

namespace Versioned {
    public class Common { public static int Which() { return 0; } }
#if V10 || V12 || V10NOKEY
    public class Only10 { }
#endif
#if V12
    public class Only12 { }
#endif
#if V15 || V30
    public class Only15 { }
#endif
#if V20
    public class Only20 { }
#endif
#if V30
    public class Only30 { }
#endif
}

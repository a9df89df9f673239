// Ghosts.cs: GHOSTS_SCRATCH (the copy GhostClient is compiled against)
// defines Ghost.Here and Ghost.Missing; the shipped Ghosts.dll only
// Ghost.Here. ABSENT builds Absent.dll (Gone.Thing), which is never shipped.
using System.Reflection;

[assembly: AssemblyVersion("1.0.0.0")]

#if ABSENT
namespace Gone {
    public class Thing { }
}
#else
namespace Ghost {
    public class Here { }
#if GHOSTS_SCRATCH
    public class Missing { }
#endif
}
#endif

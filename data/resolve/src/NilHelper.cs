// NilHelper.cs: a scratch assembly NilClient is compiled against (through
// the extern alias H), so that NilClient gets TypeRefs named like its own
// types; tools/patch-md.py then gives those TypeRefs nil and Module scopes.
using System.Reflection;
[assembly: AssemblyVersion("1.0.0.0")]
namespace Nil {
    public class Local { }
    public class ViaModule { }
    public class Nowhere { }
}

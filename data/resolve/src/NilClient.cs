// NilClient.cs: defines Nil.Local and Nil.ViaModule itself, uses the
// same-named types of NilHelper through an extern alias (TypeRefs scoped by
// AssemblyRef NilHelper), and forwards Chain.Plain to Hop3. After build.sh
// patches it (tools/patch-md.py): TypeRef Nil.Local has a nil scope (->
// this module's TypeDef), Nil.ViaModule a Module scope (-> this module),
// Nil.Nowhere a nil scope (-> no such type), Chain.Plain a nil scope (->
// this assembly's ExportedType -> Hop3).
extern alias H;
using System.Reflection;
using System.Runtime.CompilerServices;

[assembly: AssemblyVersion("1.0.0.0")]
[assembly: TypeForwardedTo(typeof(Chain.Plain))]

namespace Nil {
    public class Local { }
    public class ViaModule { }
    public static class Program {
        public static int Main() { return Use().Length; }
        public static object[] Use() {
            return new object[] { new H::Nil.Local(), new H::Nil.ViaModule(), new H::Nil.Nowhere(),
                                  new Chain.Plain() };
        }
    }
}

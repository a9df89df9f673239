// MultiPart.cs: the second module of the multi-module assembly MultiMain.
// Built by data/build.sh as a bare module (no Assembly row):
//   mcs -target:module -deterministic -out:MultiPart.netmodule src/MultiPart.cs
// MultiMain.dll lists it in its File table and exports its public types
// through ExportedType rows whose Implementation is that File row.
namespace Multi.Part
{
    public class Helper
    {
        public static int Twice(int x) { return 2 * x; }
        public int Count;

        public class NestedHelper
        {
            public string Name;
        }
    }

    public interface IPartService
    {
        int Serve(int request);
    }

    public enum PartKind { First, Second }

    public struct PartValue { public long Payload; }

    internal class PartInternal { }
}

// MultiMain.cs: manifest module of a two-module assembly. Built by
// data/build.sh after MultiPart.netmodule:
//   mcs -target:library -deterministic -addmodule:MultiPart.netmodule
//       -linkresource:MultiNotes.txt,Multi.Notes.txt -out:MultiMain.dll src/MultiMain.cs
// Types of Multi.Part live in the other module: references to them are
// TypeRefs whose ResolutionScope is a ModuleRef to MultiPart.netmodule.
using System.Reflection;
using Multi.Part;

[assembly: AssemblyVersion("3.0.0.0")]

namespace Multi
{
    public class Service : IPartService
    {
        private PartValue last;

        public int Serve(int request)
        {
            var h = new Helper();
            h.Count = Helper.Twice(request);
            var n = new Helper.NestedHelper();
            n.Name = PartKind.Second.ToString();
            last.Payload = h.Count;
            return h.Count + n.Name.Length;
        }

        public PartKind Kind { get { return PartKind.First; } }
    }
}

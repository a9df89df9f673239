// Res.dll: manifest resources of every kind mcs makes (data/build.sh).
// Embedded: a resource set in the System.Resources format
// (Res.Strings.resources, made by resgen from Res.Strings.resx: strings,
// primitives, a byte array, a serialised user type), a private binary
// (Res.Logo.bin) and a plain text file (Res.Notes.txt); linked: a file of
// the assembly beside it (ResNotes.txt, as Res.Linked.txt).
namespace Res
{
    public static class Holder
    {
        public const string Strings = "Res.Strings";
    }
}

// CecilDiff.cs: the independent side of tests/typeref/cecil-diff.sh. Reads
// the assemblies named on the command line with Mono.Cecil (Debian's
// libmono-cecil-cil-dev) through an assembly resolver restricted to exactly
// those files (by simple name, case-insensitively; nothing is searched on
// disk or in the GAC), resolves every TypeRef (ModuleDefinition.
// GetTypeReferences) and every ExportedType of every module, and prints one
// line per row in the format of tests/typeref/resolve_dump.c:
//     <module name> <token> <assembly simple name> <TypeDefinition.FullName>
// or "<module name> <token> - unresolved".
using System;
using System.Collections.Generic;
using System.IO;
using Mono.Cecil;

class SetResolver : IAssemblyResolver {
    readonly Dictionary<string, AssemblyDefinition> byName =
        new Dictionary<string, AssemblyDefinition>(StringComparer.OrdinalIgnoreCase);

    public void Add(AssemblyDefinition a) {
        if (!byName.ContainsKey(a.Name.Name))
            byName[a.Name.Name] = a;
    }
    public AssemblyDefinition Resolve(AssemblyNameReference name) {
        AssemblyDefinition a;
        if (byName.TryGetValue(name.Name, out a))
            return a;
        throw new AssemblyResolutionException(name);
    }
    public AssemblyDefinition Resolve(AssemblyNameReference name, ReaderParameters p) { return Resolve(name); }
    public AssemblyDefinition Resolve(string fullName) { return Resolve(AssemblyNameReference.Parse(fullName)); }
    public AssemblyDefinition Resolve(string fullName, ReaderParameters p) { return Resolve(fullName); }
}

static class Program {
    static string Describe(TypeDefinition d) {
        return d == null ? "- unresolved" : d.Module.Assembly.Name.Name + " " + d.FullName;
    }

    static TypeDefinition Try(Func<TypeDefinition> f) {
        try { return f(); } catch (Exception) { return null; }
    }

    static int Main(string[] args) {
        var resolver = new SetResolver();
        var rp = new ReaderParameters { AssemblyResolver = resolver };
        var asms = new List<AssemblyDefinition>();
        foreach (var path in args) {
            try {
                var a = AssemblyDefinition.ReadAssembly(path, rp);
                resolver.Add(a);
                asms.Add(a);
            } catch (Exception e) {
                Console.Error.WriteLine("CecilDiff: {0}: {1}", path, e.Message);
            }
        }
        foreach (var a in asms) {
            var m = a.MainModule;
            foreach (var tr in m.GetTypeReferences()) {
                var t = tr;
                Console.WriteLine("{0} 0x{1:x8} {2}", m.Name, tr.MetadataToken.ToUInt32(),
                                  Describe(Try(() => t.Resolve())));
            }
            foreach (var et in m.ExportedTypes) {
                var e = et;
                Console.WriteLine("{0} 0x{1:x8} {2}", m.Name, et.MetadataToken.ToUInt32(),
                                  Describe(Try(() => e.Resolve())));
            }
        }
        return 0;
    }
}

// BenchCecil.cs: the Mono.Cecil side of the TypeRef-resolution benchmark
// (bench/typeref/README.md): reads the files named on the command line with
// an assembly resolver restricted to them and calls TypeReference.Resolve()
// on every TypeRef of every module. Prints the same summary line as bench_tr.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using Mono.Cecil;

class SetResolver : IAssemblyResolver {
    public readonly Dictionary<string, AssemblyDefinition> ByName =
        new Dictionary<string, AssemblyDefinition>(StringComparer.OrdinalIgnoreCase);
    public AssemblyDefinition Resolve(AssemblyNameReference n) {
        AssemblyDefinition a;
        if (ByName.TryGetValue(n.Name, out a)) return a;
        throw new AssemblyResolutionException(n);
    }
    public AssemblyDefinition Resolve(AssemblyNameReference n, ReaderParameters p) { return Resolve(n); }
    public AssemblyDefinition Resolve(string f) { return Resolve(AssemblyNameReference.Parse(f)); }
    public AssemblyDefinition Resolve(string f, ReaderParameters p) { return Resolve(f); }
}

static class Program {
    static int Main(string[] args) {
        var sw = Stopwatch.StartNew();
        var r = new SetResolver();
        var rp = new ReaderParameters { AssemblyResolver = r };
        var list = new List<AssemblyDefinition>();
        foreach (var p in args) {
            try {
                var a = AssemblyDefinition.ReadAssembly(p, rp);
                if (!r.ByName.ContainsKey(a.Name.Name)) r.ByName[a.Name.Name] = a;
                list.Add(a);
            } catch (Exception) { }
        }
        long n = 0, ok = 0, sum = 0;
        foreach (var a in list)
            foreach (var tr in a.MainModule.GetTypeReferences()) {
                n++;
                TypeDefinition d = null;
                try { d = tr.Resolve(); } catch (Exception) { }
                if (d != null) { ok++; sum += d.MetadataToken.ToUInt32(); }
            }
        Console.WriteLine("files {0} typerefs {1} resolved {2} whole_ms {3:F2} checksum {4}",
                          list.Count, n, ok, sw.Elapsed.TotalMilliseconds, sum);
        return 0;
    }
}

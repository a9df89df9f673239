// bench_sig_cecil: the Mono.Cecil side of the signature benchmark
// (bench/sig/README.md). Reads every file named on the command line with
// Debian's Cecil 0.9.5 and, for every MethodDef and MemberRef signature,
// TypeSpec and MethodSpec, has Cecil decode it and print it with its own
// names (TypeReference.FullName): a method as `RET(P1,P2)`, a field
// MemberRef as its type, a MethodSpec as `<A,B>`. Timed with a Stopwatch
// from the first ReadModule to the last name; prints the same report line
// as the C programs (cpu_ns from the process's total processor time).
//
// Build: mcs -optimize+ -r:Mono.Cecil.dll bench_sig_cecil.cs
// Usage: mono bench_sig_cecil.exe [-p] file...
using System;
using System.Diagnostics;
using System.IO;
using System.Reflection;
using System.Text;
using Mono.Cecil;

static class BenchSigCecil
{
    static long files, methoddefs, memberrefs, typespecs, methodspecs, errors, bytes;
    static bool print;
    static TextWriter output;

    // Cecil 0.9.5 cannot read VAR/MVAR with no generic context (LookupToken
    // gives none); the same context as tests/generics/cecil-names.cs.
    static FieldInfo readerField = typeof(ModuleDefinition).GetField("reader",
        BindingFlags.NonPublic | BindingFlags.Instance);
    static FieldInfo contextField = typeof(ModuleDefinition).Assembly
        .GetType("Mono.Cecil.MetadataReader").GetField("context",
            BindingFlags.NonPublic | BindingFlags.Instance);

    static int Rows(ModuleDefinition mod, int table)
    {
        var image = typeof(ModuleDefinition).GetField("Image",
            BindingFlags.NonPublic | BindingFlags.Instance).GetValue(mod);
        var tableType = typeof(ModuleDefinition).Assembly.GetType("Mono.Cecil.Metadata.Table");
        return (int)image.GetType().GetMethod("GetTableLength")
            .Invoke(image, new object[] { Enum.ToObject(tableType, table) });
    }

    static string Method(IMethodSignature m)
    {
        var sb = new StringBuilder(m.ReturnType.FullName).Append('(');
        for (int i = 0; i < m.Parameters.Count; i++) {
            if (i > 0)
                sb.Append(',');
            sb.Append(m.Parameters[i].ParameterType.FullName);
        }
        return sb.Append(')').ToString();
    }

    static void Emit(uint token, string text)
    {
        if (text == null) {
            errors++;
            if (print)
                output.Write(token.ToString("x8") + " ERR\n");
            return;
        }
        bytes += text.Length;
        if (print)
            output.Write(token.ToString("x8") + " " + text + "\n");
    }

    static void One(ModuleDefinition mod, uint table, uint rid)
    {
        uint token = table << 24 | rid;
        string text = null;
        try {
            var method = new MethodReference("<context>", mod.TypeSystem.Void,
                new TypeReference("", "<context>", mod, null));
            contextField.SetValue(readerField.GetValue(mod), method);
            var x = mod.LookupToken((int)token);
            if (table == 0x06 || (table == 0x0a && x is MethodReference))
                text = Method((IMethodSignature)x);
            else if (table == 0x0a)
                text = ((FieldReference)x).FieldType.FullName;
            else if (table == 0x1b)
                text = ((TypeReference)x).FullName;
            else {
                var gim = (GenericInstanceMethod)x;
                var sb = new StringBuilder("<");
                for (int i = 0; i < gim.GenericArguments.Count; i++) {
                    if (i > 0)
                        sb.Append(',');
                    sb.Append(gim.GenericArguments[i].FullName);
                }
                text = sb.Append('>').ToString();
            }
        } catch (Exception) {
            text = null;
        }
        Emit(token, text);
    }

    static void Work(string[] paths)
    {
        foreach (var path in paths) {
            ModuleDefinition mod;
            try {
                mod = ModuleDefinition.ReadModule(path);
            } catch (Exception) {
                errors++;
                continue;
            }
            files++;
            int n = Rows(mod, 0x06);
            for (uint rid = 1; rid <= n; rid++, methoddefs++)
                One(mod, 0x06, rid);
            n = Rows(mod, 0x0a);
            for (uint rid = 1; rid <= n; rid++, memberrefs++)
                One(mod, 0x0a, rid);
            n = Rows(mod, 0x1b);
            for (uint rid = 1; rid <= n; rid++, typespecs++)
                One(mod, 0x1b, rid);
            n = Rows(mod, 0x2b);
            for (uint rid = 1; rid <= n; rid++, methodspecs++)
                One(mod, 0x2b, rid);
        }
    }

    static int Main(string[] args)
    {
        int first = 0;
        if (args.Length > 0 && args[0] == "-p") {
            print = true;
            first = 1;
        }
        var paths = new string[args.Length - first];
        Array.Copy(args, first, paths, 0, paths.Length);
        output = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
        var proc = Process.GetCurrentProcess();
        var cpu0 = proc.TotalProcessorTime;
        var sw = Stopwatch.StartNew();
        Work(paths);
        sw.Stop();
        proc.Refresh();
        var cpu = proc.TotalProcessorTime - cpu0;
        long wallNs = (long)(sw.ElapsedTicks * (1e9 / Stopwatch.Frequency));
        output.Write(string.Format("side=cecil files={0} methoddefs={1} memberrefs={2} " +
            "typespecs={3} methodspecs={4} sigs={5} errors={6} bytes={7} wall_ns={8} " +
            "cpu_ns={9} init_ns=0\n", files, methoddefs, memberrefs, typespecs, methodspecs,
            methoddefs + memberrefs + typespecs + methodspecs, errors, bytes, wallNs,
            cpu.Ticks * 100));
        output.Flush();
        return 0;
    }
}

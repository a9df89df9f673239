// bench_srm: the System.Reflection.Metadata side of bench/srm (README.md).
// The same workloads as mdtools' bench programs, on the same inputs, with
// the same checks:
//
//   bench_srm cells [--passes N] FILE...       every cell of every table
//   bench_srm sig [--passes N] [-p] FILE...    decode and print every
//       MethodDef and MemberRef signature, TypeSpec and MethodSpec
//   bench_srm names [--passes N] [-p] IN       IN: `PATH TOKEN` lines
//       (bench/batch/gen path); each (file, MethodDef) to its full name
//   bench_srm batch [--passes N] IN OUT        what `mdinspect batch` does
//       with `PATH TOKEN` lines: one name (or `[unresolved: ...]`) per line
//
// Without --passes the work runs once (the process as a user meets it).
// With --passes N it runs once to warm up (JIT, tiering) and then N times;
// the report gives each pass's process CPU time (CLOCK_PROCESS_CPUTIME_ID,
// as the C programs read it) and wall time. A pass opens its files, does
// the work and closes them: nothing is kept from one pass to the next.
// -p prints the names to stdout (one pass) for comparing the sides.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.IO;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Reflection.PortableExecutable;
using System.Runtime.InteropServices;
using System.Text;

namespace BenchSrm
{
    static class Program
    {
        [StructLayout(LayoutKind.Sequential)]
        struct Timespec { public long sec, nsec; }

        [DllImport("libc", EntryPoint = "clock_gettime")]
        static extern int clock_gettime(int clk, out Timespec ts);

        static long Ns(int clk)
        {
            clock_gettime(clk, out Timespec t);
            return t.sec * 1000000000L + t.nsec;
        }
        static long CpuNs() => Ns(2); // CLOCK_PROCESS_CPUTIME_ID
        static long WallNs() => Ns(1); // CLOCK_MONOTONIC

        static bool print;
        static TextWriter output;

        static int Main(string[] args)
        {
            long cpu0 = CpuNs();
            if (args.Length < 2)
                return Usage();
            string mode = args[0];
            int passes = 0;
            var rest = new List<string>();
            for (int i = 1; i < args.Length; i++) {
                if (args[i] == "--passes" && i + 1 < args.Length)
                    passes = int.Parse(args[++i], CultureInfo.InvariantCulture);
                else if (args[i] == "-p")
                    print = true;
                else
                    rest.Add(args[i]);
            }
            if (rest.Count == 0)
                return Usage();
            Func<string> pass;
            switch (mode) {
            case "cells": pass = () => CellsPass(rest); break;
            case "sig": pass = () => SigPass(rest); break;
            case "names": {
                var input = ReadPairs(rest[0]);
                pass = () => NamesPass(input);
                break;
            }
            case "batch":
                if (rest.Count != 2)
                    return Usage();
                pass = () => BatchPass(rest[0], rest[1]);
                break;
            default:
                return Usage();
            }
            if (print) {
                output = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
                pass();
                output.Flush();
                return 0;
            }
            var cpus = new List<long>();
            var walls = new List<long>();
            string line = null;
            for (int p = 0; p <= passes; p++) {
                if (passes > 0 && p == 0) {
                    pass(); // warm-up
                    continue;
                }
                long c0 = CpuNs(), w0 = WallNs();
                line = pass();
                cpus.Add(CpuNs() - c0);
                walls.Add(WallNs() - w0);
            }
            Console.WriteLine($"side=srm mode={mode} {line} passes={cpus.Count} pass_cpu_ns={string.Join(",", cpus)} " +
                              $"pass_wall_ns={string.Join(",", walls)} start_cpu_ns={cpu0} proc_cpu_ns={CpuNs()}");
            return 0;
        }

        static int Usage()
        {
            Console.Error.WriteLine("usage: bench_srm cells|sig|names|batch [--passes N] [-p] FILE... | IN [OUT]");
            return 2;
        }

        // SRM's usual way in: a PEReader over the file (it maps the file)
        // and its MetadataReader.
        static PEReader Open(string path) => new PEReader(File.OpenRead(path));

        static string CellsPass(List<string> files)
        {
            var s = new Sums();
            foreach (var f in files) {
                using var pe = Open(f);
                Cells.Walk(pe.GetMetadataReader(), s);
                s.files++;
            }
            return s.Line();
        }

        static ulong sigBytes, sigErrors;

        static void Emit(int token, string name)
        {
            sigBytes += (ulong)Encoding.UTF8.GetByteCount(name);
            if (output != null)
                output.Write(token.ToString("x8") + " " + name + "\n");
        }

        static string SigPass(List<string> files)
        {
            ulong nfiles = 0, md = 0, mr = 0, ts = 0, ms = 0;
            sigBytes = sigErrors = 0;
            foreach (var f in files) {
                using var pe = Open(f);
                var r = pe.GetMetadataReader();
                var names = new FullNames(r);
                nfiles++;
                int n = r.GetTableRowCount(TableIndex.MethodDef);
                for (int i = 1; i <= n; i++, md++) {
                    try {
                        var sig = r.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(i)).DecodeSignature(names, null);
                        Emit(0x06000000 | i, names.MethodSig(sig));
                    } catch (BadImageFormatException) { Bad(0x06000000 | i); }
                }
                n = r.GetTableRowCount(TableIndex.MemberRef);
                for (int i = 1; i <= n; i++, mr++) {
                    try {
                        var m = r.GetMemberReference(MetadataTokens.MemberReferenceHandle(i));
                        if (m.GetKind() == MemberReferenceKind.Method) {
                            var sig = m.DecodeMethodSignature(names, null);
                            Emit(0x0A000000 | i, names.MethodSig(sig));
                        } else {
                            Emit(0x0A000000 | i, m.DecodeFieldSignature(names, null));
                        }
                    } catch (BadImageFormatException) { Bad(0x0A000000 | i); }
                }
                n = r.GetTableRowCount(TableIndex.TypeSpec);
                for (int i = 1; i <= n; i++, ts++) {
                    try {
                        Emit(0x1B000000 | i, r.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(i)).DecodeSignature(names, null));
                    } catch (BadImageFormatException) { Bad(0x1B000000 | i); }
                }
                n = r.GetTableRowCount(TableIndex.MethodSpec);
                for (int i = 1; i <= n; i++, ms++) {
                    try {
                        var a = r.GetMethodSpecification(MetadataTokens.MethodSpecificationHandle(i)).DecodeSignature(names, null);
                        Emit(0x2B000000 | i, names.Args(a));
                    } catch (BadImageFormatException) { Bad(0x2B000000 | i); }
                }
            }
            return $"files={nfiles} methoddefs={md} memberrefs={mr} typespecs={ts} methodspecs={ms} " +
                   $"sigs={md + mr + ts + ms} errors={sigErrors} bytes={sigBytes}";
        }

        static void Bad(int token)
        {
            sigErrors++;
            output?.Write(token.ToString("x8") + " ERR\n");
        }

        // The names input, parsed before any pass: distinct paths and
        // (path index, token) pairs.
        sealed class Pairs
        {
            public readonly List<string> Paths = new List<string>();
            public int[] File;
            public int[] Token;
        }

        static Pairs ReadPairs(string path)
        {
            var p = new Pairs();
            var index = new Dictionary<string, int>();
            var files = new List<int>();
            var tokens = new List<int>();
            foreach (var line in System.IO.File.ReadLines(path)) {
                int sp = line.LastIndexOf(' ');
                if (sp <= 0)
                    continue;
                string f = line.Substring(0, sp);
                if (!index.TryGetValue(f, out int k)) {
                    k = p.Paths.Count;
                    index[f] = k;
                    p.Paths.Add(f);
                }
                files.Add(k);
                tokens.Add((int)uint.Parse(line.AsSpan(sp + 3), NumberStyles.HexNumber, CultureInfo.InvariantCulture));
            }
            p.File = files.ToArray();
            p.Token = tokens.ToArray();
            return p;
        }

        static string NamesPass(Pairs input)
        {
            var pes = new PEReader[input.Paths.Count];
            var names = new FullNames[input.Paths.Count];
            ulong bytes = 0, errors = 0, files = 0;
            try {
                for (int i = 0; i < input.File.Length; i++) {
                    int k = input.File[i];
                    var n = names[k];
                    if (n == null) {
                        pes[k] = Open(input.Paths[k]);
                        n = names[k] = new FullNames(pes[k].GetMetadataReader());
                        files++;
                    }
                    int row = input.Token[i] & 0xFFFFFF;
                    if (input.Token[i] >> 24 != 6 || row == 0 || row > n.Reader.GetTableRowCount(TableIndex.MethodDef)) {
                        errors++;
                        continue;
                    }
                    string s = n.Method(MetadataTokens.MethodDefinitionHandle(row));
                    bytes += (ulong)Encoding.UTF8.GetByteCount(s);
                    output?.Write(s + "\n");
                }
            } finally {
                foreach (var pe in pes)
                    pe?.Dispose();
            }
            return $"files={files} names={input.File.Length} errors={errors} bytes={bytes}";
        }

        // `mdinspect batch` on `PATH TOKEN` lines, single-threaded: read a
        // line, find the module by path (opened once), name the MethodDef,
        // write one line out.
        static string BatchPass(string inPath, string outPath)
        {
            var mods = new Dictionary<string, FullNames>();
            var pes = new List<PEReader>();
            ulong lines = 0, unresolved = 0;
            using (var w = new StreamWriter(outPath, false, new UTF8Encoding(false), 1 << 16))
            using (var rd = new StreamReader(inPath, Encoding.UTF8, false, 1 << 16)) {
                string line;
                while ((line = rd.ReadLine()) != null) {
                    lines++;
                    int sp = line.LastIndexOf(' ');
                    uint token = 0;
                    if (sp <= 0 || !line.AsSpan(sp + 1).StartsWith("0x") ||
                        !uint.TryParse(line.AsSpan(sp + 3), NumberStyles.HexNumber, CultureInfo.InvariantCulture, out token)) {
                        w.Write("[unresolved: bad line]\n");
                        unresolved++;
                        continue;
                    }
                    string f = line.Substring(0, sp);
                    if (!mods.TryGetValue(f, out var n)) {
                        try {
                            var pe = Open(f);
                            pes.Add(pe);
                            n = new FullNames(pe.GetMetadataReader());
                        } catch (Exception e) when (e is IOException || e is BadImageFormatException ||
                                                    e is UnauthorizedAccessException || e is InvalidOperationException) {
                            n = null;
                        }
                        mods[f] = n;
                    }
                    if (n == null) {
                        w.Write("[unresolved: unknown file]\n");
                        unresolved++;
                        continue;
                    }
                    int row = (int)(token & 0xFFFFFF);
                    if (token >> 24 != 6 || row == 0 || row > n.Reader.GetTableRowCount(TableIndex.MethodDef)) {
                        w.Write("[unresolved: no such row]\n");
                        unresolved++;
                        continue;
                    }
                    w.Write(n.Method(MetadataTokens.MethodDefinitionHandle(row)));
                    w.Write('\n');
                }
            }
            foreach (var pe in pes)
                pe.Dispose();
            return $"lines={lines} unresolved={unresolved}";
        }
    }
}

// Reflection's names for a log's frames, for the offline check of the
// profiler's tests (data/profiler/README.md, "Every frame through
// reflection"). The program's own methods name themselves while they run
// (Names.Note); framework and plug-in code does not, so `Workload reflect`
// names every distinct frame of a log after the fact: it finds each MVID
// among the assemblies of the given folders (System.Reflection.Metadata
// reads the MVID from the file), loads that assembly into the runtime
// (the default context for the framework and the program, a context of
// its own for any other, so that two plug-ins named alike both load),
// checks the loaded module's ModuleVersionId, asks reflection for the
// token (Module.ResolveMethod, Module.ResolveType) and prints the name in
// mdtools' full style with the same rules as Names.cs. The log's
// descriptors already say __Canon where the code was shared, so nothing is
// normalised here: the name is the frame's, as the runtime ran it.
//
// Input: one frame per line, without its IL offset (a method
// MVID:0x06......{...}<...> or a type descriptor). Output: "FRAME NAME"
// per line, or "FRAME ?WHY" when reflection cannot name it.
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Reflection.Metadata;
using System.Reflection.PortableExecutable;
using System.Runtime.Loader;
using System.Text;

namespace Mdp.Work
{
    public static class Resolve
    {
        sealed class Bad : Exception
        {
            public Bad(string why) : base(why) { }
        }

        static readonly Dictionary<string, Type> Prims = new Dictionary<string, Type>
        {
            ["BOOLEAN"] = typeof(bool), ["CHAR"] = typeof(char), ["I1"] = typeof(sbyte),
            ["U1"] = typeof(byte), ["I2"] = typeof(short), ["U2"] = typeof(ushort),
            ["I4"] = typeof(int), ["U4"] = typeof(uint), ["I8"] = typeof(long),
            ["U8"] = typeof(ulong), ["R4"] = typeof(float), ["R8"] = typeof(double),
            ["STRING"] = typeof(string), ["OBJECT"] = typeof(object), ["I"] = typeof(IntPtr),
            ["U"] = typeof(UIntPtr), ["VOID"] = typeof(void), ["TYPEDBYREF"] = typeof(TypedReference),
            // the runtime's own placeholder for shared code, an internal class of CoreLib
            ["__Canon"] = typeof(object).Assembly.GetType("System.__Canon", true),
        };

        // MVID (32 hex digits) -> file, over every assembly of the folders.
        static Dictionary<string, string> Scan(IEnumerable<string> dirs)
        {
            var files = new Dictionary<string, string>();
            foreach (string dir in dirs)
                foreach (string path in Directory.EnumerateFiles(dir, "*.dll"))
                {
                    try
                    {
                        using var stream = File.OpenRead(path);
                        using var pe = new PEReader(stream);
                        if (!pe.HasMetadata)
                            continue;
                        MetadataReader md = pe.GetMetadataReader();
                        string mvid = md.GetGuid(md.GetModuleDefinition().Mvid).ToString("N");
                        files.TryAdd(mvid, path);
                    }
                    catch (BadImageFormatException)
                    {
                        // a native library beside the assemblies
                    }
                }
            return files;
        }

        static Dictionary<string, string> files;
        static readonly Dictionary<string, Module> Modules = new Dictionary<string, Module>();

        static Module Load(string mvid)
        {
            if (Modules.TryGetValue(mvid, out Module m))
                return m;
            if (!files.TryGetValue(mvid, out string path))
                throw new Bad("no assembly with MVID " + mvid);
            AssemblyName name = AssemblyName.GetAssemblyName(path);
            Assembly asm = null;
            try
            {
                asm = AssemblyLoadContext.Default.LoadFromAssemblyName(name);
            }
            catch (FileNotFoundException)
            {
            }
            if (asm == null || Names.Mvid(asm.ManifestModule) != mvid)
                asm = new AssemblyLoadContext(mvid).LoadFromAssemblyPath(Path.GetFullPath(path));
            m = asm.ManifestModule;
            if (Names.Mvid(m) != mvid)
                throw new Bad(path + " loaded with MVID " + Names.Mvid(m) + ", not " + mvid);
            Modules[mvid] = m;
            return m;
        }

        // A descriptor at s[i..]: its full-style name; i moves past it.
        static string Desc(string s, ref int i)
        {
            string name;
            int start = i;
            while (i < s.Length && (char.IsLetterOrDigit(s[i]) || s[i] == '_'))
                i++;
            string word = s.Substring(start, i - start);
            if (i < s.Length && s[i] == ':')
            {
                i++;
                int t = i;
                while (i < s.Length && (char.IsLetterOrDigit(s[i])))
                    i++;
                int token = Convert.ToInt32(s.Substring(t, i - t), 16);
                if ((token >> 24) != 0x02)
                    throw new Bad("not a TypeDef: " + s.Substring(t, i - t));
                Type def = Load(word).ResolveType(token);
                name = Names.Plain(def);
                List<string> args = i < s.Length && s[i] == '<' ? List(s, ref i, '>') : new List<string>();
                if (args.Count != def.GetGenericArguments().Length)
                    throw new Bad(Names.Plain(def) + " has " + def.GetGenericArguments().Length +
                                  " type parameters, the descriptor " + args.Count + " arguments");
                if (args.Count > 0)
                    name += "<" + string.Join(",", args) + ">";
            }
            else if (Prims.TryGetValue(word, out Type p))
                name = Names.Plain(p);
            else
                throw new Bad("bad descriptor at " + start + " of " + s);
            while (i < s.Length)
            {
                if (s[i] == '*' || s[i] == '&')
                    name += s[i++];
                else if (s[i] == '[' && i + 1 < s.Length && s[i + 1] == ']')
                {
                    name += "[]";
                    i += 2;
                }
                else if (s[i] == '[')
                {
                    int close = s.IndexOf(']', i);
                    int rank = int.Parse(s.Substring(i + 1, close - i - 1));
                    // doc/names.md: a rank-1 ARRAY without bounds is T[*]
                    name += rank == 1 ? "[*]" : "[" + new string(',', rank - 1) + "]";
                    i = close + 1;
                }
                else
                    break;
            }
            return name;
        }

        // "<" or "{" already at s[i]: the descriptors up to `close`.
        static List<string> List(string s, ref int i, char close)
        {
            var names = new List<string>();
            do
            {
                i++;
                names.Add(Desc(s, ref i));
            } while (i < s.Length && s[i] == ',');
            if (i >= s.Length || s[i] != close)
                throw new Bad("unclosed list in " + s);
            i++;
            return names;
        }

        static string Frame(string f)
        {
            int colon = f.IndexOf(':');
            if (colon != 32 || !f.Substring(colon + 1).StartsWith("0x06"))
            {
                int i = 0;
                string type = Desc(f, ref i);
                if (i != f.Length)
                    throw new Bad("trailing text in " + f);
                return type;
            }
            Module module = Load(f.Substring(0, colon));
            int end = colon + 1;
            while (end < f.Length && char.IsLetterOrDigit(f[end]))
                end++;
            MethodBase m = module.ResolveMethod(Convert.ToInt32(f.Substring(colon + 1, end - colon - 1), 16));
            List<string> classArgs = end < f.Length && f[end] == '{' ? List(f, ref end, '}') : new List<string>();
            List<string> methodArgs = end < f.Length && f[end] == '<' ? List(f, ref end, '>') : new List<string>();
            if (end != f.Length)
                throw new Bad("trailing text in " + f);
            Type owner = m.DeclaringType;
            int classParams = owner == null ? 0 : owner.GetGenericArguments().Length;
            int methodParams = m.IsGenericMethodDefinition ? m.GetGenericArguments().Length : 0;
            if (classArgs.Count != classParams || methodArgs.Count != methodParams)
                throw new Bad(string.Format("{0} takes {1}+{2} type arguments, the frame has {3}+{4}",
                                            m.Name, classParams, methodParams, classArgs.Count, methodArgs.Count));
            // a global function's owner is the module's <Module> type
            string name = owner == null ? "<Module>" : Names.Plain(owner);
            if (classArgs.Count > 0)
                name += "<" + string.Join(",", classArgs) + ">";
            name += "::" + m.Name;
            if (methodArgs.Count > 0)
                name += "<" + string.Join(",", methodArgs) + ">";
            return name;
        }

        // Workload reflect OUT FRAMES DIR...
        public static int Run(string output, string frames, string[] dirs)
        {
            files = Scan(dirs);
            var lines = new List<string>();
            int bad = 0;
            foreach (string f in File.ReadLines(frames))
            {
                if (f.Length == 0)
                    continue;
                string name;
                try
                {
                    name = Frame(f);
                }
                catch (Exception e) when (e is Bad || e is ArgumentException || e is FormatException ||
                                          e is IOException || e is BadImageFormatException)
                {
                    name = "?" + e.Message.Replace('\n', ' ');
                    bad++;
                }
                lines.Add(f + " " + name);
            }
            File.WriteAllLines(output, lines, new UTF8Encoding(false));
            return bad == 0 ? 0 : 1;
        }
    }
}

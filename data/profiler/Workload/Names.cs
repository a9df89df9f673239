// How the test program names itself, in mdtools' full style (doc/names.md)
// and after the normalisation the profiler's names are compared under
// (data/profiler/README.md): a method runs as the runtime compiled it, and
// the runtime shares one body among instantiations over reference types.
// So every type argument that is a reference type is printed as
// System.__Canon; a value-type argument stays, with its own arguments
// normalised the same way. The class of an allocated object is exact: alloc
// records use Exact().
using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Reflection;
using System.Text;

namespace Mdp.Work
{
    public static class Names
    {
        static readonly object Lock = new object();
        static readonly List<string> Lines = new List<string>();
        static readonly HashSet<string> Seen = new HashSet<string>();

        static string StripArity(string name)
        {
            int tick = name.IndexOf('`');
            return tick < 0 ? name : name.Substring(0, tick);
        }

        // Ns.Outer+Inner, no arity, no arguments.
        public static string Plain(Type t)
        {
            string n = StripArity(t.Name);
            if (t.IsNested)
                return Plain(t.DeclaringType) + "+" + n;
            return string.IsNullOrEmpty(t.Namespace) ? n : t.Namespace + "." + n;
        }

        static string Format(Type t, bool canon)
        {
            if (t.IsArray)
            {
                string e = Arg(t.GetElementType(), canon);
                int rank = t.GetArrayRank();
                return e + (t.IsSZArray ? "[]" : "[" + new string(',', rank - 1) + "]");
            }
            if (t.IsByRef)
                return Arg(t.GetElementType(), canon) + "&";
            if (t.IsPointer)
                return Arg(t.GetElementType(), canon) + "*";
            if (t.IsGenericType)
            {
                Type def = t.GetGenericTypeDefinition();
                return Plain(def) + "<" + string.Join(",", t.GetGenericArguments().Select(a => Arg(a, canon))) + ">";
            }
            return Plain(t);
        }

        // A type in argument position.
        static string Arg(Type t, bool canon)
        {
            if (canon && !t.IsValueType)
                return "System.__Canon";
            return Format(t, canon);
        }

        // The class of a running method, normalised.
        public static string Class(Type t) => Format(t, true);

        // An allocated object's class, exact.
        public static string Exact(Type t) => Format(t, false);

        public static string Method(Type owner, string name, Type[] methodArgs)
        {
            string s = Class(owner) + "::" + name;
            if (methodArgs != null && methodArgs.Length > 0)
                s += "<" + string.Join(",", methodArgs.Select(a => Arg(a, true))) + ">";
            return s;
        }

        public static string Mvid(Module m) => m.ModuleVersionId.ToString("N");

        static readonly Dictionary<Type, string> Prims = new Dictionary<Type, string>
        {
            [typeof(bool)] = "BOOLEAN", [typeof(char)] = "CHAR", [typeof(sbyte)] = "I1",
            [typeof(byte)] = "U1", [typeof(short)] = "I2", [typeof(ushort)] = "U2",
            [typeof(int)] = "I4", [typeof(uint)] = "U4", [typeof(long)] = "I8",
            [typeof(ulong)] = "U8", [typeof(float)] = "R4", [typeof(double)] = "R8",
            [typeof(string)] = "STRING", [typeof(object)] = "OBJECT", [typeof(IntPtr)] = "I",
            [typeof(UIntPtr)] = "U", [typeof(void)] = "VOID", [typeof(TypedReference)] = "TYPEDBYREF",
        };

        // The portable descriptor of doc/names.md, from reflection: the
        // TypeDef token and the MVID of the module that defines it. With
        // canon, reference-type arguments are __Canon (the normalisation).
        public static string Desc(Type t, bool canon)
        {
            if (Prims.TryGetValue(t, out string p))
                return p;
            if (t.IsArray)
                return DescArg(t.GetElementType(), canon) + (t.IsSZArray ? "[]" : "[" + t.GetArrayRank() + "]");
            if (t.IsByRef)
                return DescArg(t.GetElementType(), canon) + "&";
            if (t.IsPointer)
                return DescArg(t.GetElementType(), canon) + "*";
            Type def = t.IsGenericType ? t.GetGenericTypeDefinition() : t;
            string d = Mvid(def.Module) + ":0x" + def.MetadataToken.ToString("x8");
            if (t.IsGenericType)
                d += "<" + string.Join(",", t.GetGenericArguments().Select(a => DescArg(a, canon))) + ">";
            return d;
        }

        static string DescArg(Type t, bool canon) => canon && !t.IsValueType ? "__Canon" : Desc(t, canon);

        // The log's frame of a method instantiation: mvid:0xTOKEN{class args}<method args>.
        public static string Frame(MethodBase m, Type owner, Type[] methodArgs)
        {
            string f = Mvid(m.Module) + ":0x" + m.MetadataToken.ToString("x8");
            if (owner.IsGenericType)
                f += "{" + string.Join(",", owner.GetGenericArguments().Select(a => DescArg(a, true))) + "}";
            if (methodArgs != null && methodArgs.Length > 0)
                f += "<" + string.Join(",", methodArgs.Select(a => DescArg(a, true))) + ">";
            return f;
        }

        static void Add(string line)
        {
            lock (Lock)
                if (Seen.Add(line))
                    Lines.Add(line);
        }

        // One method instantiation the program ran: "FRAME NAME".
        public static void Note(MethodBase m, Type owner, string name, Type[] methodArgs)
        {
            Add(Frame(m, owner, methodArgs) + " " + Method(owner, name, methodArgs));
        }

        // Every method of the module's non-generic types: they run
        // unshared, under their plain names. Generic ones are noted by
        // instantiation as they run.
        public static void NoteModule(Module module)
        {
            const BindingFlags all = BindingFlags.DeclaredOnly | BindingFlags.Public | BindingFlags.NonPublic |
                                     BindingFlags.Instance | BindingFlags.Static;
            foreach (Type t in module.GetTypes())
            {
                if (t.ContainsGenericParameters)
                    continue;
                foreach (MethodBase m in t.GetMethods(all).Cast<MethodBase>().Concat(t.GetConstructors(all)))
                    if (!m.IsGenericMethodDefinition && !m.IsAbstract)
                        Note(m, t, m.Name, null);
            }
        }

        // A fact for the checker: "# key value...".
        public static void Fact(string key, string value) => Add("# " + key + " " + value);

        public static void Write(string path)
        {
            lock (Lock)
                File.WriteAllLines(path, Lines, new UTF8Encoding(false));
        }
    }
}

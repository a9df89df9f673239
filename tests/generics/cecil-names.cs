// cecil-names.cs: the independent side of the differential test
// (tests/generics/diff-names.sh). Mono.Cecil decodes every TypeDef,
// TypeRef, TypeSpec, MethodSpec and MemberRef of each file named on the
// command line; this program prints each as doc/names.md's full style,
// walking Cecil's type model (never its FullName strings), one line per row:
//
//     F <path>
//     D 0x02000001 <name>        TypeDef
//     E 0x01000001 <name>        TypeRef
//     T 0x1b000001 <name>        TypeSpec
//     M 0x2b000001 <name>        MethodSpec
//     R 0x0a000001 <name>        MemberRef (Parent::Name)
//     <kind> 0x........ ERR <why>
//
// Build: mcs -r:Mono.Cecil.dll cecil-names.cs; run with mono.
using System;
using System.Collections.Generic;
using System.IO;
using System.Reflection;
using System.Text;
using Mono.Cecil;

static class CecilNames
{
    // The arity suffix of doc/names.md: a backtick and 1..65535 without a
    // leading zero, at the end of the name. Returns the arity (0: none) and
    // the name without it.
    static int Arity(string name, out string stem)
    {
        stem = name;
        int tick = name.LastIndexOf('`');
        if (tick < 0 || tick + 1 >= name.Length || name[tick + 1] == '0')
            return 0;
        int n = 0;
        for (int i = tick + 1; i < name.Length; i++) {
            if (name[i] < '0' || name[i] > '9')
                return 0;
            n = n * 10 + (name[i] - '0');
            if (n > 0xFFFF)
                return 0;
        }
        stem = name.Substring(0, tick);
        return n;
    }

    static string Simple(string name)
    {
        string stem;
        Arity(name, out stem);
        return stem;
    }

    // The name of a type as the generic type of an instantiation: no
    // parameter list.
    static string Named(TypeReference t)
    {
        string seg = (t.Namespace.Length > 0 ? t.Namespace + "." : "") + Simple(t.Name);
        return t.DeclaringType != null ? Named(t.DeclaringType) + "+" + seg : seg;
    }

    // A type named on its own: a generic one shows its parameters, by name
    // for a definition that has GenericParam rows, else from the arity
    // suffixes of the nesting chain (`Dictionary<,>`).
    static string NamedOwn(TypeReference t)
    {
        var def = t as TypeDefinition;
        if (def != null && def.HasGenericParameters) {
            var sb = new StringBuilder(Named(t)).Append('<');
            var ps = new List<GenericParameter>(def.GenericParameters);
            ps.Sort((a, b) => a.Position.CompareTo(b.Position));
            for (int i = 0; i < ps.Count; i++)
                sb.Append(i > 0 ? "," : "").Append(ps[i].Name);
            return sb.Append('>').ToString();
        }
        int arity = 0;
        for (var c = t; c != null; c = c.DeclaringType) {
            string stem;
            arity += Arity(c.Name, out stem);
        }
        if (arity == 0)
            return Named(t);
        return Named(t) + "<" + new string(',', arity - 1) + ">";
    }

    static string Word(MethodCallingConvention cc)
    {
        switch ((int)cc & 0x0f) {
        case 0: return "";
        case 1: return " unmanaged[Cdecl]";
        case 2: return " unmanaged[Stdcall]";
        case 3: return " unmanaged[Thiscall]";
        case 4: return " unmanaged[Fastcall]";
        case 5: return " vararg";
        case 9: return " unmanaged";
        default: return " callconv(" + ((int)cc & 0x0f) + ")";
        }
    }

    static string Name(TypeReference t, int depth)
    {
        if (depth > 200)
            throw new Exception("too deep");
        if (t is RequiredModifierType || t is OptionalModifierType) {
            var mods = new StringBuilder();
            while (t is RequiredModifierType || t is OptionalModifierType) {
                var req = t as RequiredModifierType;
                if (req != null) {
                    mods.Append(" modreq(").Append(Name(req.ModifierType, depth + 1)).Append(')');
                    t = req.ElementType;
                } else {
                    var opt = (OptionalModifierType)t;
                    mods.Append(" modopt(").Append(Name(opt.ModifierType, depth + 1)).Append(')');
                    t = opt.ElementType;
                }
            }
            return Name(t, depth + 1) + mods.ToString();
        }
        if (t is PinnedType)
            return Name(((PinnedType)t).ElementType, depth + 1) + " pinned";
        if (t is ByReferenceType)
            return Name(((ByReferenceType)t).ElementType, depth + 1) + "&";
        if (t is PointerType)
            return Name(((PointerType)t).ElementType, depth + 1) + "*";
        if (t is SentinelType)
            return Name(((SentinelType)t).ElementType, depth + 1);
        var arr = t as ArrayType;
        if (arr != null) {
            string e = Name(arr.ElementType, depth + 1);
            if (arr.IsVector)
                return e + "[]";
            var sb = new StringBuilder(e).Append('[');
            for (int i = 0; i < arr.Dimensions.Count; i++) {
                var d = arr.Dimensions[i];
                if (i > 0)
                    sb.Append(',');
                if (d.LowerBound.HasValue && d.UpperBound.HasValue)
                    sb.Append(d.LowerBound.Value).Append("...").Append(d.UpperBound.Value);
                else if (d.LowerBound.HasValue)
                    sb.Append(d.LowerBound.Value).Append("...");
                else if (d.UpperBound.HasValue)
                    sb.Append(d.UpperBound.Value + 1); // a size with lower bound 0
            }
            return sb.Append(']').ToString();
        }
        var gi = t as GenericInstanceType;
        if (gi != null) {
            var sb = new StringBuilder(Named(gi.ElementType)).Append('<');
            for (int i = 0; i < gi.GenericArguments.Count; i++) {
                if (i > 0)
                    sb.Append(',');
                sb.Append(Name(gi.GenericArguments[i], depth + 1));
            }
            return sb.Append('>').ToString();
        }
        var gp = t as GenericParameter;
        if (gp != null)
            return (gp.MetadataType == MetadataType.MVar ? "!!" : "!") + gp.Position;
        var fp = t as FunctionPointerType;
        if (fp != null) {
            var sb = new StringBuilder("delegate*");
            if (fp.HasThis)
                sb.Append(" instance");
            if (fp.ExplicitThis)
                sb.Append(" explicit");
            sb.Append(Word(fp.CallingConvention)).Append('<');
            for (int i = 0; i < fp.Parameters.Count; i++) {
                var pt = fp.Parameters[i].ParameterType;
                if (pt is SentinelType)
                    sb.Append("...,");
                sb.Append(Name(pt, depth + 1)).Append(',');
            }
            return sb.Append(Name(fp.ReturnType, depth + 1)).Append('>').ToString();
        }
        return NamedOwn(t);
    }

    static string MethodName(MethodReference m)
    {
        var gim = m as GenericInstanceMethod;
        if (gim != null) {
            var sb = new StringBuilder(MethodName(gim.ElementMethod)).Append('<');
            for (int i = 0; i < gim.GenericArguments.Count; i++) {
                if (i > 0)
                    sb.Append(',');
                sb.Append(Name(gim.GenericArguments[i], 0));
            }
            return sb.Append('>').ToString();
        }
        return Name(m.DeclaringType, 0) + "::" + m.Name;
    }

    // Cecil 0.9.5 (Debian's libmono-cecil-cil-dev) refuses VAR/MVAR when it
    // reads a row with no generic context (NotSupportedException). Give it
    // one made of a MethodReference on a TypeReference, neither a
    // definition: Cecil then creates the parameters !N / !!N on demand and
    // the decoding itself stays Cecil's. Row counts come from Cecil's image.
    static FieldInfo readerField = typeof(ModuleDefinition).GetField("reader",
        BindingFlags.NonPublic | BindingFlags.Instance);
    static FieldInfo contextField = typeof(ModuleDefinition).Assembly
        .GetType("Mono.Cecil.MetadataReader").GetField("context",
            BindingFlags.NonPublic | BindingFlags.Instance);

    static void SetContext(ModuleDefinition mod)
    {
        var type = new TypeReference("", "<context>", mod, null);
        var method = new MethodReference("<context>", mod.TypeSystem.Void, type);
        contextField.SetValue(readerField.GetValue(mod), method);
    }

    static int RowCount(ModuleDefinition mod, int table)
    {
        var image = typeof(ModuleDefinition).GetField("Image",
            BindingFlags.NonPublic | BindingFlags.Instance).GetValue(mod);
        var tableType = typeof(ModuleDefinition).Assembly.GetType("Mono.Cecil.Metadata.Table");
        return (int)image.GetType().GetMethod("GetTableLength")
            .Invoke(image, new object[] { Enum.ToObject(tableType, table) });
    }

    static void Rows(TextWriter o, ModuleDefinition mod, char kind, uint table, int count)
    {
        for (uint rid = 1; rid <= count; rid++) {
            uint token = table << 24 | rid;
            string line;
            try {
                SetContext(mod);
                var x = mod.LookupToken((int)token);
                if (x == null)
                    line = "ERR null";
                else if (kind == 'T' || kind == 'D' || kind == 'E')
                    line = Name((TypeReference)x, 0);
                else if (kind == 'M')
                    line = MethodName((MethodReference)x);
                else if (x is MethodReference)
                    line = MethodName((MethodReference)x);
                else
                    line = Name(((MemberReference)x).DeclaringType, 0) + "::" +
                           ((MemberReference)x).Name;
            } catch (Exception e) {
                line = "ERR " + e.GetType().Name + ": " + e.Message.Replace('\n', ' ');
            }
            o.Write(kind);
            o.Write(" 0x");
            o.Write(token.ToString("x8"));
            o.Write(' ');
            o.Write(line);
            o.Write('\n');
        }
    }

    static int Main(string[] args)
    {
        var o = new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false), 1 << 16);
        foreach (var path in args) {
            o.Write("F " + path + "\n");
            ModuleDefinition mod;
            try {
                mod = ModuleDefinition.ReadModule(path);
            } catch (Exception e) {
                o.Write("ERR cannot read: " + e.Message.Replace('\n', ' ') + "\n");
                continue;
            }
            // Table numbers of Mono.Cecil.Metadata.Table: TypeDef 0x02,
            // TypeRef 0x01, TypeSpec 0x1b, MethodSpec 0x2b, MemberRef 0x0a
            // (Cecil's enum follows the spec).
            Rows(o, mod, 'D', 0x02, RowCount(mod, 0x02));
            Rows(o, mod, 'E', 0x01, RowCount(mod, 0x01));
            Rows(o, mod, 'T', 0x1b, RowCount(mod, 0x1b));
            Rows(o, mod, 'M', 0x2b, RowCount(mod, 0x2b));
            Rows(o, mod, 'R', 0x0a, RowCount(mod, 0x0a));
        }
        o.Flush();
        return 0;
    }
}

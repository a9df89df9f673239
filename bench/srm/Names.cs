// Names in mdtools' full style (doc/names.md) built with SRM: a
// signature type provider for SRM's SignatureDecoder, which decodes a blob
// straight into the provider's strings, and the full name of a MethodDef
// (`Ns.Outer+Inner<T>::Name`). TypeDef and TypeRef names are built once
// per row and kept (as mdtools' mdt_name_cache and libmono's class cache
// do); nothing else is cached. The output must be byte-identical to
// mdtools': run.sh compares checksums of both sides' printed names.
using System;
using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;
using System.Text;

namespace BenchSrm
{
    // One reader's names. Not thread-safe: one per reader and thread.
    sealed class FullNames : ISignatureTypeProvider<string, object>
    {
        readonly MetadataReader r;
        readonly string[] typeDefs, typeDefsAlone, typeRefs;
        readonly StringBuilder sb = new StringBuilder(256);
        string lastModified; // the last GetModifiedType result
        int lastModifiedBase; // where its base type ends

        public FullNames(MetadataReader reader)
        {
            r = reader;
            typeDefs = new string[r.GetTableRowCount(TableIndex.TypeDef) + 1];
            typeDefsAlone = new string[typeDefs.Length];
            typeRefs = new string[r.GetTableRowCount(TableIndex.TypeRef) + 1];
        }

        public MetadataReader Reader => r;

        // A name as stored, less a generic arity suffix (`N).
        string Plain(StringHandle h)
        {
            string s = r.GetString(h);
            int tick = s.LastIndexOf('`');
            if (tick < 0 || tick == s.Length - 1)
                return s;
            for (int i = tick + 1; i < s.Length; i++)
                if (s[i] < '0' || s[i] > '9')
                    return s;
            return s.Substring(0, tick);
        }

        string Segment(StringHandle ns, StringHandle name)
        {
            if (ns.IsNil || r.GetString(ns).Length == 0)
                return Plain(name);
            return r.GetString(ns) + "." + Plain(name);
        }

        // Outermost first, `+` between the nesting levels.
        public string TypeDef(TypeDefinitionHandle h)
        {
            int row = MetadataTokens.GetRowNumber(h);
            string s = typeDefs[row];
            if (s != null)
                return s;
            var td = r.GetTypeDefinition(h);
            var outer = td.GetDeclaringType();
            s = outer.IsNil ? Segment(td.Namespace, td.Name) : TypeDef(outer) + "+" + Segment(td.Namespace, td.Name);
            return typeDefs[row] = s;
        }

        // A TypeDef named on its own: a generic one shows its parameters.
        public string TypeDefAlone(TypeDefinitionHandle h)
        {
            int row = MetadataTokens.GetRowNumber(h);
            string s = typeDefsAlone[row];
            if (s != null)
                return s;
            var gps = r.GetTypeDefinition(h).GetGenericParameters();
            s = TypeDef(h);
            if (gps.Count > 0) {
                sb.Clear().Append(s).Append('<');
                for (int i = 0; i < gps.Count; i++) {
                    if (i > 0)
                        sb.Append(',');
                    sb.Append(r.GetString(r.GetGenericParameter(gps[i]).Name));
                }
                s = sb.Append('>').ToString();
            }
            return typeDefsAlone[row] = s;
        }

        public string TypeRef(TypeReferenceHandle h)
        {
            int row = MetadataTokens.GetRowNumber(h);
            string s = typeRefs[row];
            if (s != null)
                return s;
            var tr = r.GetTypeReference(h);
            var scope = tr.ResolutionScope;
            s = !scope.IsNil && scope.Kind == HandleKind.TypeReference
                    ? TypeRef((TypeReferenceHandle)scope) + "+" + Segment(tr.Namespace, tr.Name)
                    : Segment(tr.Namespace, tr.Name);
            return typeRefs[row] = s;
        }

        // `Owner::Name` of a MethodDef.
        public string Method(MethodDefinitionHandle h)
        {
            var md = r.GetMethodDefinition(h);
            return TypeDefAlone(md.GetDeclaringType()) + "::" + r.GetString(md.Name);
        }

        // ISignatureTypeProvider
        public string GetPrimitiveType(PrimitiveTypeCode c) => c switch {
            PrimitiveTypeCode.Void => "System.Void",
            PrimitiveTypeCode.Boolean => "System.Boolean",
            PrimitiveTypeCode.Char => "System.Char",
            PrimitiveTypeCode.SByte => "System.SByte",
            PrimitiveTypeCode.Byte => "System.Byte",
            PrimitiveTypeCode.Int16 => "System.Int16",
            PrimitiveTypeCode.UInt16 => "System.UInt16",
            PrimitiveTypeCode.Int32 => "System.Int32",
            PrimitiveTypeCode.UInt32 => "System.UInt32",
            PrimitiveTypeCode.Int64 => "System.Int64",
            PrimitiveTypeCode.UInt64 => "System.UInt64",
            PrimitiveTypeCode.Single => "System.Single",
            PrimitiveTypeCode.Double => "System.Double",
            PrimitiveTypeCode.String => "System.String",
            PrimitiveTypeCode.Object => "System.Object",
            PrimitiveTypeCode.IntPtr => "System.IntPtr",
            PrimitiveTypeCode.UIntPtr => "System.UIntPtr",
            PrimitiveTypeCode.TypedReference => "System.TypedReference",
            _ => "?"
        };

        public string GetTypeFromDefinition(MetadataReader reader, TypeDefinitionHandle h, byte rawTypeKind) => TypeDef(h);
        public string GetTypeFromReference(MetadataReader reader, TypeReferenceHandle h, byte rawTypeKind) => TypeRef(h);

        public string GetTypeFromSpecification(MetadataReader reader, object ctx, TypeSpecificationHandle h, byte rawTypeKind) =>
            r.GetTypeSpecification(h).DecodeSignature(this, ctx);

        public string GetSZArrayType(string e) => e + "[]";
        public string GetPointerType(string e) => e + "*";
        public string GetByReferenceType(string e) => e + "&";
        public string GetPinnedType(string e) => e + " pinned";
        public string GetGenericTypeParameter(object ctx, int index) => "!" + index.ToString();
        public string GetGenericMethodParameter(object ctx, int index) => "!!" + index.ToString();

        public string GetGenericInstantiation(string generic, ImmutableArray<string> args)
        {
            sb.Clear().Append(generic).Append('<');
            for (int i = 0; i < args.Length; i++) {
                if (i > 0)
                    sb.Append(',');
                sb.Append(args[i]);
            }
            return sb.Append('>').ToString();
        }

        public string GetArrayType(string e, ArrayShape shape)
        {
            sb.Clear().Append(e).Append('[');
            var sizes = shape.Sizes;
            var lo = shape.LowerBounds;
            if (shape.Rank == 1 && sizes.Length == 0 && lo.Length == 0) {
                sb.Append('*');
            } else {
                for (int i = 0; i < shape.Rank; i++) {
                    if (i > 0)
                        sb.Append(',');
                    bool hasLo = i < lo.Length, hasSize = i < sizes.Length;
                    if (hasLo && hasSize)
                        sb.Append(lo[i]).Append("...").Append((long)lo[i] + sizes[i] - 1);
                    else if (hasLo)
                        sb.Append(lo[i]).Append("...");
                    else if (hasSize)
                        sb.Append(sizes[i]);
                }
            }
            sb.Append(']');
            if (sizes.Length > shape.Rank || lo.Length > shape.Rank) {
                sb.Append("{sizes=");
                for (int i = 0; i < sizes.Length; i++)
                    sb.Append(i > 0 ? "," : "").Append(sizes[i]);
                sb.Append(";lo=");
                for (int i = 0; i < lo.Length; i++)
                    sb.Append(i > 0 ? "," : "").Append(lo[i]);
                sb.Append('}');
            }
            return sb.ToString();
        }

        // SRM hands modifiers innermost last: CMOD a CMOD b T arrives as
        // Modified(a, Modified(b, T)). mdtools prints them in blob order
        // after the type, `T modopt(a) modopt(b)`: an outer modifier goes
        // before the inner ones.
        public string GetModifiedType(string modifier, string unmodified, bool isRequired)
        {
            string m = (isRequired ? " modreq(" : " modopt(") + modifier + ")";
            string s;
            int baseLen;
            if (ReferenceEquals(unmodified, lastModified)) {
                baseLen = lastModifiedBase;
                s = unmodified.Substring(0, baseLen) + m + unmodified.Substring(baseLen);
            } else {
                baseLen = unmodified.Length;
                s = unmodified + m;
            }
            lastModified = s;
            lastModifiedBase = baseLen;
            return s;
        }

        public string GetFunctionPointerType(MethodSignature<string> sig)
        {
            sb.Clear().Append("delegate*");
            var h = sig.Header;
            if (h.IsInstance)
                sb.Append(" instance");
            if (h.HasExplicitThis)
                sb.Append(" explicit");
            sb.Append(h.CallingConvention switch {
                SignatureCallingConvention.Default => "",
                SignatureCallingConvention.CDecl => " unmanaged[Cdecl]",
                SignatureCallingConvention.StdCall => " unmanaged[Stdcall]",
                SignatureCallingConvention.ThisCall => " unmanaged[Thiscall]",
                SignatureCallingConvention.FastCall => " unmanaged[Fastcall]",
                SignatureCallingConvention.VarArgs => " vararg",
                SignatureCallingConvention.Unmanaged => " unmanaged",
                _ => " callconv(" + ((int)h.CallingConvention).ToString() + ")"
            });
            sb.Append('<');
            for (int i = 0; i < sig.ParameterTypes.Length; i++) {
                if (i == sig.RequiredParameterCount)
                    sb.Append("...,");
                sb.Append(sig.ParameterTypes[i]).Append(',');
            }
            return sb.Append(sig.ReturnType).Append('>').ToString();
        }

        // `[instance ][explicit ][CC ][generic<N> ]RET(P1,...,Pn)`.
        public string MethodSig(in MethodSignature<string> sig)
        {
            sb.Clear();
            var h = sig.Header;
            if (h.IsInstance)
                sb.Append("instance ");
            if (h.HasExplicitThis)
                sb.Append("explicit ");
            switch (h.CallingConvention) {
            case SignatureCallingConvention.Default: break;
            case SignatureCallingConvention.CDecl: sb.Append("unmanaged[Cdecl] "); break;
            case SignatureCallingConvention.StdCall: sb.Append("unmanaged[Stdcall] "); break;
            case SignatureCallingConvention.ThisCall: sb.Append("unmanaged[Thiscall] "); break;
            case SignatureCallingConvention.FastCall: sb.Append("unmanaged[Fastcall] "); break;
            case SignatureCallingConvention.VarArgs: sb.Append("vararg "); break;
            case SignatureCallingConvention.Unmanaged: sb.Append("unmanaged "); break;
            default: sb.Append("callconv(").Append((int)h.CallingConvention).Append(") "); break;
            }
            if (h.IsGeneric)
                sb.Append("generic<").Append(sig.GenericParameterCount).Append("> ");
            sb.Append(sig.ReturnType).Append('(');
            for (int i = 0; i < sig.ParameterTypes.Length; i++) {
                if (i > 0)
                    sb.Append(',');
                if (i == sig.RequiredParameterCount)
                    sb.Append("...,");
                sb.Append(sig.ParameterTypes[i]);
            }
            return sb.Append(')').ToString();
        }

        public string Args(ImmutableArray<string> args)
        {
            sb.Clear().Append('<');
            for (int i = 0; i < args.Length; i++) {
                if (i > 0)
                    sb.Append(',');
                sb.Append(args[i]);
            }
            return sb.Append('>').ToString();
        }
    }
}

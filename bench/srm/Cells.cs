// Every cell of every table through System.Reflection.Metadata's public
// API: the same sums as bench/bench_md.c (bench/common.h), so run.sh can
// check that both sides read the same thing. SRM reads a table's rows
// through typed handles (TypeDefinition.Name, MemberReference.Parent...);
// the cells it has no row accessor for are reached the way an SRM caller
// reaches them: list columns (TypeDef.FieldList...) from the first handle of
// the owner's range, InterfaceImpl.Class and EventMap/PropertyMap from the
// owning TypeDef, FieldMarshal, ClassLayout, FieldLayout, FieldRVA, ImplMap,
// NestedClass and MethodSemantics from the field, method, type, property
// or event they describe (SRM looks those up by binary search), and the
// raw value of a coded index rebuilt from the handle (ECMA-335 II.24.2.6).
// A string's length is found by scanning the #Strings heap for its NUL
// (what bench_md's readers do; MetadataReader.GetString would also decode
// and allocate a string).
using System;
using System.Collections.Immutable;
using System.Reflection.Metadata;
using System.Reflection.Metadata.Ecma335;

namespace BenchSrm
{
    sealed class Sums
    {
        public ulong files, rows, cells, str_bytes, blob_bytes, guid_bytes, guid_sum, raw_other, errors;

        public void Clear() { files = rows = cells = str_bytes = blob_bytes = guid_bytes = guid_sum = raw_other = errors = 0; }

        public string Line() =>
            $"files={files} rows={rows} cells={cells} str_bytes={str_bytes} blob_bytes={blob_bytes} " +
            $"guid_bytes={guid_bytes} guid_sum={guid_sum} raw_other={raw_other} errors={errors}";
    }

    static unsafe class Cells
    {
        // Coded indexes: tag bits and each table's tag (ECMA-335 II.24.2.6);
        // 0xFF where a table is not a member.
        sealed class Coded
        {
            public readonly int Bits;
            public readonly byte[] Tag = new byte[64];

            public Coded(int bits, params int[] tables)
            {
                Bits = bits;
                Array.Fill(Tag, (byte)0xFF);
                for (int i = 0; i < tables.Length; i++)
                    if (tables[i] >= 0)
                        Tag[tables[i]] = (byte)i;
            }
        }

        static readonly Coded TypeDefOrRef = new Coded(2, 0x02, 0x01, 0x1B);
        static readonly Coded HasConstant = new Coded(2, 0x04, 0x08, 0x17);
        static readonly Coded HasCustomAttribute = new Coded(5, 0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0A,
            0x00, 0x0E, 0x17, 0x14, 0x11, 0x1A, 0x1B, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2A, 0x2C, 0x2B);
        static readonly Coded HasDeclSecurity = new Coded(2, 0x02, 0x06, 0x20);
        static readonly Coded MemberRefParent = new Coded(3, 0x02, 0x01, 0x1A, 0x06, 0x1B);
        static readonly Coded MethodDefOrRef = new Coded(1, 0x06, 0x0A);
        static readonly Coded Implementation = new Coded(2, 0x26, 0x23, 0x27);
        static readonly Coded CustomAttributeType = new Coded(3, -1, -1, 0x06, 0x0A, -1);
        static readonly Coded ResolutionScope = new Coded(2, 0x00, 0x1A, 0x23, 0x01);
        static readonly Coded TypeOrMethodDef = new Coded(1, 0x02, 0x06);

        static ulong CI(EntityHandle h, Coded c, Sums s)
        {
            if (h.IsNil)
                return 0;
            int table = (int)h.Kind;
            byte tag = table < 64 ? c.Tag[table] : (byte)0xFF;
            if (tag == 0xFF) {
                s.errors++;
                return 0;
            }
            return ((ulong)(uint)MetadataTokens.GetRowNumber(h) << c.Bits) | tag;
        }

        static ulong Row(EntityHandle h) => h.IsNil ? 0 : (ulong)(uint)MetadataTokens.GetRowNumber(h);

        [ThreadStatic] static byte* strings;
        [ThreadStatic] static int stringsSize;

        static ulong Str(StringHandle h)
        {
            int off = MetadataTokens.GetHeapOffset(h);
            if ((uint)off >= (uint)stringsSize)
                return 0;
            int n = new ReadOnlySpan<byte>(strings + off, stringsSize - off).IndexOf((byte)0);
            return n < 0 ? 0 : (ulong)n;
        }

        static ulong Blob(MetadataReader r, BlobHandle h) => (ulong)r.GetBlobReader(h).Length;

        static void Guid(MetadataReader r, GuidHandle h, Sums s)
        {
            if (h.IsNil)
                return;
            System.Guid g = r.GetGuid(h);
            Span<byte> b = stackalloc byte[16];
            g.TryWriteBytes(b);
            s.guid_bytes += 16;
            for (int i = 0; i < 16; i++)
                s.guid_sum += b[i];
        }

        // The raw list column of each owner row, rebuilt from the first handle
        // of the row's range: an empty range starts where the next one does.
        // Walked from the last row down; `end` is the member table's rows + 1.
        static int ListStart(int first, int count, ref int next)
        {
            int start = count > 0 ? first : next;
            next = start;
            return start;
        }

        public static void Walk(MetadataReader r, Sums s)
        {
            strings = r.MetadataPointer + r.GetHeapMetadataOffset(HeapIndex.String);
            stringsSize = r.GetHeapSize(HeapIndex.String);
            ulong raw = 0, str = 0, blob = 0;

            for (int t = 0; t < 64; t++) {
                int n = t <= (int)TableIndex.CustomDebugInformation ? r.GetTableRowCount((TableIndex)t) : 0;
                if (n == 0)
                    continue;
                s.rows += (ulong)n;
                switch (t) {
                case 0x00: {
                    var m = r.GetModuleDefinition();
                    raw += (ulong)m.Generation;
                    str += Str(m.Name);
                    Guid(r, m.Mvid, s);
                    Guid(r, m.GenerationId, s);
                    Guid(r, m.BaseGenerationId, s);
                    s.cells += 5;
                    break;
                }
                case 0x01:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetTypeReference(MetadataTokens.TypeReferenceHandle(i));
                        raw += CI(x.ResolutionScope, ResolutionScope, s);
                        str += Str(x.Name) + Str(x.Namespace);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x02: {
                    int nextField = r.GetTableRowCount(TableIndex.Field) + 1;
                    int nextMethod = r.GetTableRowCount(TableIndex.MethodDef) + 1;
                    for (int i = n; i >= 1; i--) {
                        var x = r.GetTypeDefinition(MetadataTokens.TypeDefinitionHandle(i));
                        raw += (ulong)(uint)x.Attributes;
                        str += Str(x.Name) + Str(x.Namespace);
                        raw += CI(x.BaseType, TypeDefOrRef, s);
                        var fields = x.GetFields();
                        int first = 0;
                        if (fields.Count > 0) {
                            var e = fields.GetEnumerator();
                            e.MoveNext();
                            first = MetadataTokens.GetRowNumber(e.Current);
                        }
                        raw += (ulong)ListStart(first, fields.Count, ref nextField);
                        var methods = x.GetMethods();
                        first = 0;
                        if (methods.Count > 0) {
                            var e = methods.GetEnumerator();
                            e.MoveNext();
                            first = MetadataTokens.GetRowNumber(e.Current);
                        }
                        raw += (ulong)ListStart(first, methods.Count, ref nextMethod);
                    }
                    s.cells += (ulong)n * 6;
                    break;
                }
                case 0x04:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetFieldDefinition(MetadataTokens.FieldDefinitionHandle(i));
                        raw += (ulong)(ushort)x.Attributes;
                        str += Str(x.Name);
                        blob += Blob(r, x.Signature);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x06: {
                    int nextParam = r.GetTableRowCount(TableIndex.Param) + 1;
                    for (int i = n; i >= 1; i--) {
                        var x = r.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(i));
                        raw += (ulong)(uint)x.RelativeVirtualAddress + (ulong)(ushort)x.ImplAttributes +
                               (ulong)(ushort)x.Attributes;
                        str += Str(x.Name);
                        blob += Blob(r, x.Signature);
                        var ps = x.GetParameters();
                        int first = 0;
                        if (ps.Count > 0) {
                            var e = ps.GetEnumerator();
                            e.MoveNext();
                            first = MetadataTokens.GetRowNumber(e.Current);
                        }
                        raw += (ulong)ListStart(first, ps.Count, ref nextParam);
                    }
                    s.cells += (ulong)n * 6;
                    break;
                }
                case 0x08:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetParameter(MetadataTokens.ParameterHandle(i));
                        raw += (ulong)(ushort)x.Attributes + (ulong)(ushort)x.SequenceNumber;
                        str += Str(x.Name);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x09: {
                    // The class of an InterfaceImpl row is its owning TypeDef.
                    int seen = 0;
                    int ntd = r.GetTableRowCount(TableIndex.TypeDef);
                    for (int i = 1; i <= ntd; i++) {
                        var td = r.GetTypeDefinition(MetadataTokens.TypeDefinitionHandle(i));
                        foreach (var h in td.GetInterfaceImplementations()) {
                            var x = r.GetInterfaceImplementation(h);
                            raw += (ulong)i + CI(x.Interface, TypeDefOrRef, s);
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x0A:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetMemberReference(MetadataTokens.MemberReferenceHandle(i));
                        raw += CI(x.Parent, MemberRefParent, s);
                        str += Str(x.Name);
                        blob += Blob(r, x.Signature);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x0B:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetConstant(MetadataTokens.ConstantHandle(i));
                        // Type, then a padding byte SRM does not expose (zero).
                        raw += (ulong)(byte)x.TypeCode + CI(x.Parent, HasConstant, s);
                        blob += Blob(r, x.Value);
                    }
                    s.cells += (ulong)n * 4;
                    break;
                case 0x0C:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetCustomAttribute(MetadataTokens.CustomAttributeHandle(i));
                        raw += CI(x.Parent, HasCustomAttribute, s) + CI(x.Constructor, CustomAttributeType, s);
                        blob += Blob(r, x.Value);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x0D: {
                    int seen = 0;
                    int nf = r.GetTableRowCount(TableIndex.Field), np = r.GetTableRowCount(TableIndex.Param);
                    for (int i = 1; i <= nf; i++) {
                        var b = r.GetFieldDefinition(MetadataTokens.FieldDefinitionHandle(i)).GetMarshallingDescriptor();
                        if (!b.IsNil) {
                            raw += (ulong)i << 1;
                            blob += Blob(r, b);
                            seen++;
                        }
                    }
                    for (int i = 1; i <= np; i++) {
                        var b = r.GetParameter(MetadataTokens.ParameterHandle(i)).GetMarshallingDescriptor();
                        if (!b.IsNil) {
                            raw += ((ulong)i << 1) | 1;
                            blob += Blob(r, b);
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x0E:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetDeclarativeSecurityAttribute(MetadataTokens.DeclarativeSecurityAttributeHandle(i));
                        raw += (ulong)(ushort)x.Action + CI(x.Parent, HasDeclSecurity, s);
                        blob += Blob(r, x.PermissionSet);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x0F: {
                    int seen = 0, ntd = r.GetTableRowCount(TableIndex.TypeDef);
                    for (int i = 1; i <= ntd; i++) {
                        var l = r.GetTypeDefinition(MetadataTokens.TypeDefinitionHandle(i)).GetLayout();
                        if (!l.IsDefault) {
                            raw += (ulong)(ushort)l.PackingSize + (ulong)(uint)l.Size + (ulong)i;
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 3;
                    break;
                }
                case 0x10: {
                    int seen = 0, nf = r.GetTableRowCount(TableIndex.Field);
                    for (int i = 1; i <= nf; i++) {
                        int off = r.GetFieldDefinition(MetadataTokens.FieldDefinitionHandle(i)).GetOffset();
                        if (off != -1) {
                            raw += (ulong)(uint)off + (ulong)i;
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x11:
                    for (int i = 1; i <= n; i++)
                        blob += Blob(r, r.GetStandaloneSignature(MetadataTokens.StandaloneSignatureHandle(i)).Signature);
                    s.cells += (ulong)n;
                    break;
                case 0x12:
                case 0x15: {
                    // EventMap / PropertyMap: the parents in table order, and
                    // each one's list start from its first event / property.
                    bool ev = t == 0x12;
                    TypeDefinitionHandle[] parents = System.Linq.Enumerable.ToArray(ev ? r.GetTypesWithEvents() : r.GetTypesWithProperties());
                    int next = r.GetTableRowCount(ev ? TableIndex.Event : TableIndex.Property) + 1;
                    for (int i = parents.Length - 1; i >= 0; i--) {
                        var td = r.GetTypeDefinition(parents[i]);
                        int first = 0, count;
                        if (ev) {
                            var c = td.GetEvents();
                            count = c.Count;
                            if (count > 0) {
                                var e = c.GetEnumerator();
                                e.MoveNext();
                                first = MetadataTokens.GetRowNumber(e.Current);
                            }
                        } else {
                            var c = td.GetProperties();
                            count = c.Count;
                            if (count > 0) {
                                var e = c.GetEnumerator();
                                e.MoveNext();
                                first = MetadataTokens.GetRowNumber(e.Current);
                            }
                        }
                        raw += Row(parents[i]) + (ulong)ListStart(first, count, ref next);
                    }
                    if (parents.Length != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x14:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetEventDefinition(MetadataTokens.EventDefinitionHandle(i));
                        raw += (ulong)(ushort)x.Attributes + CI(x.Type, TypeDefOrRef, s);
                        str += Str(x.Name);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x17:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetPropertyDefinition(MetadataTokens.PropertyDefinitionHandle(i));
                        raw += (ulong)(ushort)x.Attributes;
                        str += Str(x.Name);
                        blob += Blob(r, x.Signature);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x18: {
                    // MethodSemantics rows as SRM gives them: each property's
                    // and event's accessors (Setter 1, Getter 2, Other 4,
                    // AddOn 8, RemoveOn 0x10, Fire 0x20; HasSemantics tag 1
                    // bit: Event 0, Property 1).
                    int seen = 0;
                    int np = r.GetTableRowCount(TableIndex.Property), ne = r.GetTableRowCount(TableIndex.Event);
                    for (int i = 1; i <= np; i++) {
                        var a = r.GetPropertyDefinition(MetadataTokens.PropertyDefinitionHandle(i)).GetAccessors();
                        ulong assoc = ((ulong)i << 1) | 1;
                        if (!a.Setter.IsNil) { raw += 1 + Row(a.Setter) + assoc; seen++; }
                        if (!a.Getter.IsNil) { raw += 2 + Row(a.Getter) + assoc; seen++; }
                        foreach (var o in a.Others) { raw += 4 + Row(o) + assoc; seen++; }
                    }
                    for (int i = 1; i <= ne; i++) {
                        var a = r.GetEventDefinition(MetadataTokens.EventDefinitionHandle(i)).GetAccessors();
                        ulong assoc = (ulong)i << 1;
                        if (!a.Adder.IsNil) { raw += 8 + Row(a.Adder) + assoc; seen++; }
                        if (!a.Remover.IsNil) { raw += 0x10 + Row(a.Remover) + assoc; seen++; }
                        if (!a.Raiser.IsNil) { raw += 0x20 + Row(a.Raiser) + assoc; seen++; }
                        foreach (var o in a.Others) { raw += 4 + Row(o) + assoc; seen++; }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 3;
                    break;
                }
                case 0x19:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetMethodImplementation(MetadataTokens.MethodImplementationHandle(i));
                        raw += Row(x.Type) + CI(x.MethodBody, MethodDefOrRef, s) +
                               CI(x.MethodDeclaration, MethodDefOrRef, s);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x1A:
                    for (int i = 1; i <= n; i++)
                        str += Str(r.GetModuleReference(MetadataTokens.ModuleReferenceHandle(i)).Name);
                    s.cells += (ulong)n;
                    break;
                case 0x1B:
                    for (int i = 1; i <= n; i++)
                        blob += Blob(r, r.GetTypeSpecification(MetadataTokens.TypeSpecificationHandle(i)).Signature);
                    s.cells += (ulong)n;
                    break;
                case 0x1C: {
                    // ImplMap rows of methods (MemberForwarded tag 1); SRM
                    // has no accessor for a field's.
                    int seen = 0, nm = r.GetTableRowCount(TableIndex.MethodDef);
                    for (int i = 1; i <= nm; i++) {
                        var imp = r.GetMethodDefinition(MetadataTokens.MethodDefinitionHandle(i)).GetImport();
                        if (imp.Module.IsNil && imp.Name.IsNil)
                            continue;
                        raw += (ulong)(ushort)imp.Attributes + (((ulong)i << 1) | 1) + Row(imp.Module);
                        str += Str(imp.Name);
                        seen++;
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 4;
                    break;
                }
                case 0x1D: {
                    int seen = 0, nf = r.GetTableRowCount(TableIndex.Field);
                    for (int i = 1; i <= nf; i++) {
                        int rva = r.GetFieldDefinition(MetadataTokens.FieldDefinitionHandle(i)).GetRelativeVirtualAddress();
                        if (rva != 0) {
                            raw += (ulong)(uint)rva + (ulong)i;
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x20: {
                    var x = r.GetAssemblyDefinition();
                    var v = x.Version;
                    raw += (ulong)(uint)x.HashAlgorithm + (ulong)v.Major + (ulong)v.Minor + (ulong)v.Build +
                           (ulong)v.Revision + (ulong)(uint)x.Flags;
                    blob += Blob(r, x.PublicKey);
                    str += Str(x.Name) + Str(x.Culture);
                    s.cells += 9;
                    break;
                }
                case 0x23:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetAssemblyReference(MetadataTokens.AssemblyReferenceHandle(i));
                        var v = x.Version;
                        raw += (ulong)v.Major + (ulong)v.Minor + (ulong)v.Build + (ulong)v.Revision +
                               (ulong)(uint)x.Flags;
                        blob += Blob(r, x.PublicKeyOrToken) + Blob(r, x.HashValue);
                        str += Str(x.Name) + Str(x.Culture);
                    }
                    s.cells += (ulong)n * 9;
                    break;
                case 0x26:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetAssemblyFile(MetadataTokens.AssemblyFileHandle(i));
                        raw += x.ContainsMetadata ? 0u : 1u;
                        str += Str(x.Name);
                        blob += Blob(r, x.HashValue);
                    }
                    s.cells += (ulong)n * 3;
                    break;
                case 0x27:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetExportedType(MetadataTokens.ExportedTypeHandle(i));
                        raw += (ulong)(uint)x.Attributes + (ulong)(uint)x.GetTypeDefinitionId() +
                               CI(x.Implementation, Implementation, s);
                        str += Str(x.Name) + Str(x.Namespace);
                    }
                    s.cells += (ulong)n * 5;
                    break;
                case 0x28:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetManifestResource(MetadataTokens.ManifestResourceHandle(i));
                        raw += (ulong)x.Offset + (ulong)(uint)x.Attributes + CI(x.Implementation, Implementation, s);
                        str += Str(x.Name);
                    }
                    s.cells += (ulong)n * 4;
                    break;
                case 0x29: {
                    int seen = 0, ntd = r.GetTableRowCount(TableIndex.TypeDef);
                    for (int i = 1; i <= ntd; i++) {
                        var d = r.GetTypeDefinition(MetadataTokens.TypeDefinitionHandle(i)).GetDeclaringType();
                        if (!d.IsNil) {
                            raw += (ulong)i + Row(d);
                            seen++;
                        }
                    }
                    if (seen != n)
                        s.errors++;
                    s.cells += (ulong)n * 2;
                    break;
                }
                case 0x2A:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetGenericParameter(MetadataTokens.GenericParameterHandle(i));
                        raw += (ulong)(ushort)x.Index + (ulong)(ushort)x.Attributes + CI(x.Parent, TypeOrMethodDef, s);
                        str += Str(x.Name);
                    }
                    s.cells += (ulong)n * 4;
                    break;
                case 0x2B:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetMethodSpecification(MetadataTokens.MethodSpecificationHandle(i));
                        raw += CI(x.Method, MethodDefOrRef, s);
                        blob += Blob(r, x.Signature);
                    }
                    s.cells += (ulong)n * 2;
                    break;
                case 0x2C:
                    for (int i = 1; i <= n; i++) {
                        var x = r.GetGenericParameterConstraint(MetadataTokens.GenericParameterConstraintHandle(i));
                        raw += Row(x.Parameter) + CI(x.Type, TypeDefOrRef, s);
                    }
                    s.cells += (ulong)n * 2;
                    break;
                default:
                    // A table this walk does not read (pointer tables, ENC,
                    // OS/processor, portable PDB): counted as an error, so a
                    // sum that would differ says why.
                    s.errors++;
                    break;
                }
            }
            s.raw_other += raw;
            s.str_bytes += str;
            s.blob_bytes += blob;
        }
    }
}

/* Names of the flag words of metadata rows, as ECMA-335 II.23.1 spells
 * them: TypeAttributes (II.23.1.15), MethodAttributes (II.23.1.10),
 * FieldAttributes (II.23.1.5), GenericParamAttributes (II.23.1.7),
 * AssemblyFlags (II.23.1.2), PropertyAttributes (II.23.1.14),
 * EventAttributes (II.23.1.4), ParamAttributes (II.23.1.13). Multi-bit
 * fields (visibility, layout, ...) name their values with a mask. */
#include "config.h"

#include <ctype.h>
#include <string.h>

#include <talloc.h>

#include "cmd.h"

/* MemberAccessMask's values, the same bits in MethodAttributes
 * (II.23.1.10) and FieldAttributes (II.23.1.5). */
/* clang-format off */
#define MEMBER_ACCESS                    \
    {0x0, "CompilerControlled", 0x7},    \
    {0x1, "Private", 0x7},               \
    {0x2, "FamANDAssem", 0x7},           \
    {0x3, "Assembly", 0x7},              \
    {0x4, "Family", 0x7},                \
    {0x5, "FamORAssem", 0x7},            \
    {0x6, "Public", 0x7}
/* clang-format on */

const mdi_flagname mdi_type_flags[] = {
    {0x0, "NotPublic", 0x7},
    {0x1, "Public", 0x7},
    {0x2, "NestedPublic", 0x7},
    {0x3, "NestedPrivate", 0x7},
    {0x4, "NestedFamily", 0x7},
    {0x5, "NestedAssembly", 0x7},
    {0x6, "NestedFamANDAssem", 0x7},
    {0x7, "NestedFamORAssem", 0x7},
    {0x8, "SequentialLayout", 0x18},
    {0x10, "ExplicitLayout", 0x18},
    {0x20, "Interface", 0},
    {0x80, "Abstract", 0},
    {0x100, "Sealed", 0},
    {0x400, "SpecialName", 0},
    {0x800, "RTSpecialName", 0},
    {0x1000, "Import", 0},
    {0x2000, "Serializable", 0},
    {0x4000, "WindowsRuntime", 0},
    {0x10000, "UnicodeClass", 0x30000},
    {0x20000, "AutoClass", 0x30000},
    {0x30000, "CustomFormatClass", 0x30000},
    {0x40000, "HasSecurity", 0},
    {0x100000, "BeforeFieldInit", 0},
    {0x200000, "IsTypeForwarder", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_method_flags[] = {
    MEMBER_ACCESS,
    {0x8, "UnmanagedExport", 0},
    {0x10, "Static", 0},
    {0x20, "Final", 0},
    {0x40, "Virtual", 0},
    {0x80, "HideBySig", 0},
    {0x100, "NewSlot", 0},
    {0x200, "Strict", 0},
    {0x400, "Abstract", 0},
    {0x800, "SpecialName", 0},
    {0x1000, "RTSpecialName", 0},
    {0x2000, "PInvokeImpl", 0},
    {0x4000, "HasSecurity", 0},
    {0x8000, "RequireSecObject", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_field_flags[] = {
    MEMBER_ACCESS,
    {0x10, "Static", 0},
    {0x20, "InitOnly", 0},
    {0x40, "Literal", 0},
    {0x80, "NotSerialized", 0},
    {0x100, "HasFieldRVA", 0},
    {0x200, "SpecialName", 0},
    {0x400, "RTSpecialName", 0},
    {0x1000, "HasFieldMarshal", 0},
    {0x2000, "PInvokeImpl", 0},
    {0x8000, "HasDefault", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_gparam_flags[] = {
    {0x1, "Covariant", 0x3},
    {0x2, "Contravariant", 0x3},
    {0x4, "ReferenceTypeConstraint", 0},
    {0x8, "NotNullableValueTypeConstraint", 0},
    {0x10, "DefaultConstructorConstraint", 0},
    {0x20, "AllowByRefLike", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_assembly_flags[] = {
    {0x1, "PublicKey", 0},
    {0x100, "Retargetable", 0},
    {0x200, "WindowsRuntime", 0x0E00},
    {0x4000, "DisableJITcompileOptimizer", 0},
    {0x8000, "EnableJITcompileTracking", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_property_flags[] = {
    {0x200, "SpecialName", 0},
    {0x400, "RTSpecialName", 0},
    {0x1000, "HasDefault", 0},
    {0, NULL, 0},
};

const mdi_flagname mdi_event_flags[] = {
    {0x200, "SpecialName", 0},
    {0x400, "RTSpecialName", 0},
    {0, NULL, 0},
};

char *mdi_flag_words(void *mem, uint32_t v, const mdi_flagname *names)
{
    char *s = talloc_strdup(mem, "");
    for (const mdi_flagname *n = names; s && n->name; n++) {
        if (!mdi_flag_set(v, n))
            continue;
        s = talloc_asprintf_append(s, "%s%s", s[0] ? " " : "", n->name);
    }
    for (char *c = s; c && *c; c++)
        *c = (char)tolower((unsigned char)*c);
    return s;
}

/* The ReadyToRun header (the CLI header's ManagedNativeHeader directory,
 * II.25.3.3, which ECMA-335 leaves to the implementation; CoreCLR's
 * readytorun.h): "RTR\0", major and minor version, flags, the number of
 * sections, then 12 bytes per section (type, RVA, size). Read on demand,
 * each section checked to lie inside the image. */
#include "config.h"

#include <string.h>

#include "pe/pe_int.h"
#include "util/error.h"

#define R2R_SIGNATURE 0x00525452u /* "RTR\0" */

static int header(mdt_r2r_header *out, rd *r, const mdt_image *img)
{
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    const mdt_data_dir *d = &pe->managed_native_header;
    uint32_t sig = 0;
    int e;
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "CLI header";
    if (!d->rva)
        return mdt__fail(MDT_ENOTFOUND, pl, "no managed native header: not a ReadyToRun image");
    if ((e = mdt__pe_rva_reader(r, img, d->rva, 16, "ReadyToRun header")))
        return e;
    rd_u32(r, &sig, "signature");
    if (sig != R2R_SIGNATURE)
        return mdt__fail(MDT_ENOTFOUND, pl,
                         "the managed native header (RVA 0x%x) is not "
                         "ReadyToRun (signature 0x%08x)",
                         d->rva, sig);
    memset(out, 0, sizeof *out);
    out->rva = d->rva;
    rd_u16(r, &out->major, "major version");
    rd_u16(r, &out->minor, "minor version");
    rd_u32(r, &out->flags, "flags");
    rd_u32(r, &out->nsections, "section count");
    /* The whole list must be there: one read says so for every section. */
    if ((uint64_t)out->nsections * 12 > UINT32_MAX - 16) {
        r->pos = 12;
        return rd_fail(r, MDT_EBADIMAGE, "%u sections cannot fit in an image", out->nsections);
    }
    return mdt__pe_rva_reader(r, img, d->rva, 16 + out->nsections * 12, "ReadyToRun header");
}

int mdt_r2r_header_read(mdt_r2r_header *out, const mdt_image *img)
{
    rd r;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_header_read: NULL argument");
    return header(out, &r, img);
}

int mdt_r2r_section_read(mdt_r2r_section *out, const mdt_image *img, uint32_t i)
{
    mdt_r2r_header h;
    rd r;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_section_read: NULL argument");
    if ((e = header(&h, &r, img)))
        return e;
    if (i >= h.nsections) {
        r.pos = 12;
        return rd_fail(&r, MDT_ENOTFOUND, "no section %u (the header has %u)", i + 1, h.nsections);
    }
    r.pos = 16 + (size_t)i * 12;
    rd_u32(&r, &out->type, "section type");
    rd_u32(&r, &out->rva, "section RVA");
    rd_u32(&r, &out->size, "section size");
    return 0;
}

const char *mdt_r2r_section_name(uint32_t type)
{
    /* ReadyToRunSectionType of CoreCLR's readytorun.h; 107 is retired. */
    static const char *const names[] = {
        "CompilerIdentifier",
        "ImportSections",
        "RuntimeFunctions",
        "MethodDefEntryPoints",
        "ExceptionInfo",
        "DebugInfo",
        "DelayLoadMethodCallThunks",
        NULL,
        "AvailableTypes",
        "InstanceMethodEntryPoints",
        "InliningInfo",
        "ProfileDataInfo",
        "ManifestMetadata",
        "AttributePresence",
        "InliningInfo2",
        "ComponentAssemblies",
        "OwnerCompositeExecutable",
        "PgoInstrumentationData",
        "ManifestAssemblyMvids",
        "CrossModuleInlineInfo",
        "HotColdMap",
        "MethodIsGenericMap",
        "EnclosingTypeMap",
        "TypeGenericInfoMap",
    };
    if (type < 100 || type - 100 >= sizeof names / sizeof names[0])
        return NULL;
    return names[type - 100];
}

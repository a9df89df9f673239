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

int mdt__r2r_sections(mdt__r2r_want *w, size_t n, uint16_t *major, const mdt_image *img,
                      const char *in_composite)
{
    mdt_r2r_header h;
    rd r;
    int e;
    if ((e = header(&h, &r, img)))
        return e;
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "ReadyToRun header";
    if (h.flags & MDT__R2R_FLAG_COMPONENT)
        return mdt__fail(MDT_EUNSUPPORTED, pl,
                         "a component of a composite ReadyToRun image: %s in the composite image",
                         in_composite);
    for (size_t k = 0; k < n; k++)
        w[k].have = 0, w[k].rva = w[k].size = 0;
    /* header() checked that the whole list lies in the image */
    for (uint32_t i = 0; i < h.nsections; i++) {
        uint32_t type = 0, rva = 0, size = 0;
        r.pos = 16 + (size_t)i * 12;
        rd_u32(&r, &type, "section type");
        rd_u32(&r, &rva, "section RVA");
        rd_u32(&r, &size, "section size");
        for (size_t k = 0; k < n; k++)
            if (w[k].type == type && !w[k].have)
                w[k] = (mdt__r2r_want){type, w[k].required, rva, size, 1};
    }
    for (size_t k = 0; k < n; k++)
        if (w[k].required && !w[k].have)
            return mdt__fail(MDT_ENOTFOUND, pl, "no %s section", mdt_r2r_section_name(w[k].type));
    for (size_t k = 0; k < n; k++)
        if (w[k].have && w[k].type == MDT__R2R_RUNTIME_FUNCTIONS && w[k].size % 12)
            return mdt__fail(MDT_EBADIMAGE, pl,
                             "RuntimeFunctions (RVA 0x%x) is 0x%x bytes, not a whole number of "
                             "12-byte entries",
                             w[k].rva, w[k].size);
    if (major)
        *major = h.major;
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

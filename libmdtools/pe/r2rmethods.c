/* The MethodDef whose ReadyToRun code holds an address: a profiler that
 * samples precompiled code can name the method from the image, without
 * asking the runtime.
 *
 * The layout (CoreCLR's readytorun-format.md, readytoruninfo.cpp; facts
 * only): MethodDefEntryPoints (section 103) is a NativeFormat sparse array
 * indexed by MethodDef row - 1; an element is an unsigned whose low bit
 * says fixups follow: without, the method's runtime function index is the
 * value >> 1; with, >> 2 (bit 1: the fixups are shared, a look-back
 * follows; they are not read here). InstanceMethodEntryPoints (109) is a
 * NativeFormat hashtable of generic instantiations (and of methods of
 * generic types); each entry is a method signature (flags, an optional
 * module and owner type, the token or slot, the type arguments, a
 * constraint) followed by the same unsigned. A method's funclets follow
 * its main function in RuntimeFunctions (102), so a runtime function
 * belongs to the nearest entry point at or below it; the instance entries
 * are decoded only so that generic code is not taken for the funclets of
 * the MethodDef before it (it needs the runtime's exact instantiation:
 * MDT_ENOTFOUND). An image with a HotColdMap (120; cold code split away
 * from its method) is declined.
 *
 * The inverse map, entry points by runtime function, is built once per
 * handle (a dense scratch array of the runtime functions, then the entries
 * in index order; at most one per runtime function) and searched in
 * O(log n). Everything is untrusted: positions checked against their
 * section, the signature's nesting capped, every index checked against
 * the runtime functions. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "pe/pe_int.h"
#include "util/error.h"

#define SIG_DEPTH_MAX 64
#define MARK_GENERIC 0xffffffffu /* scratch: an instance entry, or two entries at one index */

struct entry {
    uint32_t first; /* runtime function index of the entry point */
    uint32_t token; /* MethodDef; 0: generic code (an instance entry) */
};

struct mdt_r2r_methods {
    const mdt_image *img;
    uint32_t rf_rva, nrf;
    struct entry *e; /* by first */
    uint32_t n, ndefs, ninst;
};

/* ---- the method signature of an instance entry (skipped, not read) ---- */

/* rd_compressed, its one-byte case inline: a large image has ~100,000
 * signature numbers to skip at the open */
static inline int cu(rd *r, uint32_t *v, const char *what)
{
    if (r->pos < r->len && r->base[r->pos] < 0x80) {
        *v = r->base[r->pos++];
        return 0;
    }
    return rd_compressed(r, v, what);
}

static int skip_type(rd *r, int depth);

static int skip_n_types(rd *r, int depth, const char *what)
{
    uint32_t n;
    int e;
    if ((e = cu(r, &n, what)))
        return e;
    if (n > rd_left(r))
        return rd_fail(r, MDT_EBADIMAGE, "%s: %u types cannot fit", what, n);
    for (uint32_t i = 0; i < n; i++)
        if ((e = skip_type(r, depth + 1)))
            return e;
    return 0;
}

/* ECMA-335 II.23.2.12, with CoreCLR's ZapSig element types
 * (corcompile.h: 0x3b a generic parameter by rid, 0x3d a native value
 * type, 0x3e the canonical type, 0x3f a type of another module). */
static int skip_type(rd *r, int depth)
{
    uint8_t t;
    uint32_t v;
    int e;
    if (depth > SIG_DEPTH_MAX)
        return rd_fail(r, MDT_EBADIMAGE, "a type nested more than %d deep", SIG_DEPTH_MAX);
    if ((e = rd_u8(r, &t, "element type")))
        return e;
    switch (t) {
    case 0x01:
    case 0x02:
    case 0x03:
    case 0x04:
    case 0x05:
    case 0x06:
    case 0x07:
    case 0x08:
    case 0x09:
    case 0x0a:
    case 0x0b:
    case 0x0c:
    case 0x0d:
    case 0x0e:
    case 0x16:
    case 0x18:
    case 0x19:
    case 0x1c:
    case 0x3e: return 0;
    case 0x0f:
    case 0x10:
    case 0x1d:
    case 0x45:
    case 0x41:
    case 0x3d: return skip_type(r, depth + 1);
    case 0x11:
    case 0x12:
    case 0x13:
    case 0x1e:
    case 0x3b: return cu(r, &v, "type token or number");
    case 0x1f:
    case 0x20: /* a custom modifier, then the type */
    case 0x3f: /* a module index, then the type */
        if ((e = cu(r, &v, "modifier or module")))
            return e;
        return skip_type(r, depth + 1);
    case 0x15: /* GENERICINST: the generic type, its arguments */
        if ((e = skip_type(r, depth + 1)))
            return e;
        return skip_n_types(r, depth, "generic arguments");
    case 0x14: { /* ARRAY: type, rank, sizes, lower bounds */
        uint32_t rank, k;
        if ((e = skip_type(r, depth + 1)) || (e = cu(r, &rank, "array rank")))
            return e;
        for (int pass = 0; pass < 2; pass++) {
            if ((e = cu(r, &k, "array bounds")))
                return e;
            if (k > rd_left(r))
                return rd_fail(r, MDT_EBADIMAGE, "%u array bounds cannot fit", k);
            for (uint32_t i = 0; i < k; i++)
                if ((e = cu(r, &v, "array bound")))
                    return e;
        }
        return 0;
    }
    case 0x1b: { /* FNPTR: a method signature */
        uint8_t cc;
        uint32_t np;
        if ((e = rd_u8(r, &cc, "calling convention")))
            return e;
        if ((cc & 0x10) && (e = cu(r, &v, "generic parameter count")))
            return e;
        if ((e = cu(r, &np, "parameter count")))
            return e;
        if (np > rd_left(r))
            return rd_fail(r, MDT_EBADIMAGE, "%u parameters cannot fit", np);
        for (uint32_t i = 0; i <= np; i++)
            if ((e = skip_type(r, depth + 1)))
                return e;
        return 0;
    }
    default:
        r->pos--;
        return rd_fail(r, MDT_EBADIMAGE, "element type 0x%02x in a method signature", t);
    }
}

/* READYTORUN_METHOD_SIG_* */
#define SIG_METHOD_INSTANTIATION 0x04u
#define SIG_CONSTRAINED 0x20u
#define SIG_OWNER_TYPE 0x40u
#define SIG_UPDATE_CONTEXT 0x80u

static int skip_method_sig(rd *r)
{
    uint32_t flags, v;
    int e;
    if ((e = cu(r, &flags, "method signature flags")))
        return e;
    if ((flags & SIG_UPDATE_CONTEXT) && (e = cu(r, &v, "module index")))
        return e;
    if ((flags & SIG_OWNER_TYPE) && (e = skip_type(r, 0)))
        return e;
    if ((e = cu(r, &v, "method token or slot")))
        return e;
    if ((flags & SIG_METHOD_INSTANTIATION) && (e = skip_n_types(r, 0, "method type arguments")))
        return e;
    if ((flags & SIG_CONSTRAINED) && (e = skip_type(r, 0)))
        return e;
    return 0;
}

/* ---- building the map ---- */

/* An entry point's unsigned: the runtime function index. */
static int entry_index(rd *r, uint32_t nrf, uint32_t *index, const char *what)
{
    uint32_t id;
    int e;
    size_t at = r->pos;
    if ((e = mdt__native_u(r, &id, what)))
        return e;
    *index = id & 1 ? id >> 2 : id >> 1;
    if (*index >= nrf) {
        r->pos = at;
        return rd_fail(r, MDT_EBADIMAGE, "%s: runtime function %u of %u", what, *index, nrf);
    }
    return 0;
}

static void mark(uint32_t *dense, uint32_t index, uint32_t token)
{
    dense[index] = dense[index] ? MARK_GENERIC : token;
}

struct defs_walk {
    mdt_r2r_methods *m;
    uint32_t *dense;
    rd *r;
    uint32_t rva;
};

static int one_def(void *payload, uint32_t i, uint32_t at)
{
    struct defs_walk *w = payload;
    uint32_t index;
    int e;
    if ((e = mdt__native_seek(w->r, w->rva, at, "MethodDefEntryPoints element")) ||
        (e = entry_index(w->r, w->m->nrf, &index, "MethodDefEntryPoints element")))
        return e;
    mark(w->dense, index, 0x06000000u | (i + 1));
    w->m->ndefs++;
    return 0;
}

static int method_defs(mdt_r2r_methods *m, uint32_t *dense, uint32_t rva, uint32_t size)
{
    rd r;
    uint32_t n;
    int e;
    if ((e = mdt__pe_rva_reader(&r, m->img, rva, size, "MethodDefEntryPoints")) ||
        (e = mdt__native_array_count(&r, &n, "MethodDefEntryPoints")))
        return e;
    if (n > 0x00ffffffu) {
        r.pos = 0;
        return rd_fail(&r, MDT_EBADIMAGE, "MethodDefEntryPoints: %u rows (a token has 24 bits)", n);
    }
    struct defs_walk w = {m, dense, &r, rva};
    return mdt__native_array_each(&r, rva, "MethodDefEntryPoints", one_def, &w);
}

static int instances(mdt_r2r_methods *m, uint32_t *dense, uint32_t rva, uint32_t size)
{
    rd r;
    uint8_t hdr;
    int e;
    if ((e = mdt__pe_rva_reader(&r, m->img, rva, size, "InstanceMethodEntryPoints")) ||
        (e = rd_u8(&r, &hdr, "hashtable header")))
        return e;
    unsigned shift = hdr >> 2, w = hdr & 3;
    size_t base = r.pos;
    if (w > 2 || shift > 24) {
        r.pos = 0;
        return rd_fail(&r, MDT_EBADIMAGE, "InstanceMethodEntryPoints: hashtable header 0x%02x",
                       hdr);
    }
    size_t wb = (size_t)1 << w, nb = (size_t)1 << shift;
    if ((e = rd_need(&r, (nb + 1) * wb, "hashtable buckets")))
        return e;
    const uint8_t *tab = r.base + base;
    for (size_t b = 0; b < nb; b++) {
        const uint8_t *p = tab + b * wb;
        uint64_t lo = base + (w == 0 ? p[0] : w == 1 ? le16(p) : le32(p));
        p += wb;
        uint64_t hi = base + (w == 0 ? p[0] : w == 1 ? le16(p) : le32(p));
        if (lo > hi || hi > r.len) {
            r.pos = base + b * wb;
            return rd_fail(&r, MDT_EBADIMAGE, "hashtable bucket %zu: entries 0x%llx-0x%llx", b,
                           (unsigned long long)lo, (unsigned long long)hi);
        }
        r.pos = (size_t)lo;
        while (r.pos < hi) {
            uint8_t low;
            int32_t delta;
            uint32_t index;
            if ((e = rd_u8(&r, &low, "hashtable entry")))
                return e;
            size_t at = r.pos;
            if ((e = mdt__native_signed(&r, &delta, "hashtable entry offset")))
                return e;
            size_t next = r.pos;
            if ((e = mdt__native_seek(&r, rva, (uint64_t)rva + at + (int64_t)delta,
                                      "instance entry")) ||
                (e = skip_method_sig(&r)) ||
                (e = entry_index(&r, m->nrf, &index, "instance entry point")))
                return e;
            mark(dense, index, MARK_GENERIC);
            if (++m->ninst > m->nrf) /* more entries than code: a loop of offsets */
                return rd_fail(&r, MDT_EBADIMAGE,
                               "more instance entries than the %u runtime "
                               "functions",
                               m->nrf);
            r.pos = next;
        }
    }
    return 0;
}

int mdt_r2r_methods_open(mdt_r2r_methods **out, void *mem_ctx, const mdt_image *img)
{
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_methods_open: NULL argument");
    *out = NULL;
    mdt__r2r_want w[4] = {{MDT__R2R_RUNTIME_FUNCTIONS, 1, 0, 0, 0},
                          {MDT__R2R_METHODDEF_ENTRY_POINTS, 1, 0, 0, 0},
                          {MDT__R2R_INSTANCE_ENTRY_POINTS, 0, 0, 0, 0},
                          {MDT__R2R_HOT_COLD_MAP, 0, 0, 0, 0}};
    if ((e = mdt__r2r_sections(w, 4, NULL, img, "its code is")))
        return e;
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = mdt_image_name(img);
    pl.region = "ReadyToRun header";
    if (w[3].have && w[3].size)
        return mdt__fail(MDT_EUNSUPPORTED, pl,
                         "a HotColdMap (RVA 0x%x): cold code split from its methods is not "
                         "mapped",
                         w[3].rva);
    rd r;
    if ((e = mdt__pe_rva_reader(&r, img, w[0].rva, w[0].size, "RuntimeFunctions")))
        return e;
    mdt_r2r_methods *m = talloc_zero(mem_ctx, mdt_r2r_methods);
    uint32_t *dense = talloc_zero_array(m, uint32_t, w[0].size / 12 ? w[0].size / 12 : 1);
    if (!m || !dense) {
        talloc_free(m);
        return mdt__fail_simple(MDT_ENOMEM, "mdt_r2r_methods_open: out of memory");
    }
    m->img = img;
    m->rf_rva = w[0].rva;
    m->nrf = w[0].size / 12;
    if ((e = method_defs(m, dense, w[1].rva, w[1].size)) ||
        (w[2].have && (e = instances(m, dense, w[2].rva, w[2].size)))) {
        talloc_free(m);
        return e;
    }
    uint32_t n = 0;
    for (uint32_t i = 0; i < m->nrf; i++)
        n += dense[i] != 0;
    m->e = talloc_array(m, struct entry, n ? n : 1);
    if (!m->e) {
        talloc_free(m);
        return mdt__fail_simple(MDT_ENOMEM, "mdt_r2r_methods_open: out of memory");
    }
    for (uint32_t i = 0; i < m->nrf; i++)
        if (dense[i])
            m->e[m->n++] = (struct entry){i, dense[i] == MARK_GENERIC ? 0 : dense[i]};
    talloc_free(dense);
    *out = m;
    return 0;
}

uint32_t mdt_r2r_methods_entries(const mdt_r2r_methods *m)
{
    return m ? m->n : 0;
}

uint32_t mdt_r2r_methods_instances(const mdt_r2r_methods *m)
{
    return m ? m->ninst : 0;
}

/* entry k as a method: its runtime functions and their extent */
static int method(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t k)
{
    rd r;
    int e;
    uint32_t first = m->e[k].first, end = k + 1 < m->n ? m->e[k + 1].first : m->nrf;
    if ((e = mdt__pe_rva_reader(&r, m->img, m->rf_rva, m->nrf * 12, "RuntimeFunctions")))
        return e;
    uint32_t b = le32(r.base + (size_t)first * 12), x = le32(r.base + (size_t)(end - 1) * 12 + 4);
    if (x <= b) {
        r.pos = (size_t)first * 12;
        return rd_fail(&r, MDT_EBADIMAGE, "runtime functions %u-%u: code 0x%x-0x%x", first, end - 1,
                       b, x);
    }
    *out = (mdt_r2r_method){m->e[k].token, first, end - first, b, x - b};
    return 0;
}

int mdt_r2r_method_get(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t i)
{
    if (!out || !m)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_method_get: NULL argument");
    if (i >= m->n)
        return mdt__fail_simple(
            MDT_ENOTFOUND, "mdt_r2r_method_get: no entry point %u (the image has %u)", i, m->n);
    return method(out, m, i);
}

int mdt_r2r_method_at_index(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t index)
{
    if (!out || !m)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_method_at_index: NULL argument");
    uint32_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].first <= index)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (index >= m->nrf || lo == 0 || !m->e[lo - 1].token)
        return mdt__fail_simple(MDT_ENOTFOUND, "runtime function %u: %s", index,
                                index >= m->nrf ? "past the runtime functions"
                                : lo == 0       ? "before every entry point"
                                                : "generic code (an instantiation's)");
    return method(out, m, lo - 1);
}

int mdt_r2r_method_at_rva(mdt_r2r_method *out, const mdt_r2r_methods *m, uint32_t rva)
{
    rd r;
    int e;
    if (!out || !m)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_method_at_rva: NULL argument");
    if ((e = mdt__pe_rva_reader(&r, m->img, m->rf_rva, m->nrf * 12, "RuntimeFunctions")))
        return e;
    /* the last runtime function beginning at or below rva, if it holds it */
    uint32_t lo = 0, hi = m->nrf;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (le32(r.base + (size_t)mid * 12) <= rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == 0 || rva >= le32(r.base + (size_t)(lo - 1) * 12 + 4))
        return mdt__fail_simple(MDT_ENOTFOUND, "RVA 0x%x is in no runtime function", rva);
    return mdt_r2r_method_at_index(out, m, lo - 1);
}

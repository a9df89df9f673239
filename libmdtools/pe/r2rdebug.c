/* The IL-to-native maps of ReadyToRun code, read from the image's
 * DebugInfo section (type 105) as CoreCLR reads them when a debugger or a
 * profiler asks for one (GetILToNativeMapping): a profiler that finds a
 * sample in precompiled code can name its IL offset without asking the
 * runtime.
 *
 * The layout (CoreCLR's readytorun-format.md, nativeformatreader.h,
 * debuginfostore.cpp; facts only): DebugInfo is a NativeFormat sparse
 * array indexed by the method's entry in RuntimeFunctions. An element is
 * an offset; at it an unsigned "look-back" (0: the blob follows, else the
 * blob is that many bytes before, shared with another method). A blob
 * opens with nibble-coded sizes: the bounds' size and the variables' size,
 * or a 0 and then a "fat" header of more sizes, which this reader declines
 * (instrumented or OSR code, never in a precompiled image). The bounds
 * are a count and then (R2R major version 16, .NET 10 on) two bit widths
 * and a little-endian bit stream of (source kind: 2 bits, native offset
 * delta, IL offset + 3) per entry; before version 16, three nibble-coded
 * numbers per entry (delta, IL + 3, source flags).
 *
 * Everything here is untrusted: every position is checked against the
 * section's bytes (the reader), counts are capped (MDT_R2R_BOUNDS_MAX),
 * the array's descent is at most 4 steps, and nothing is allocated but
 * the handle. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "pe/pe_int.h"
#include "util/error.h"

#define BITPACKED_SINCE 16 /* R2R major version of the bit-packed bounds */

struct mdt_r2r_debug {
    const mdt_image *img;
    uint16_t major;
    uint32_t rf_rva, nrf;     /* RuntimeFunctions: 12-byte entries (x64) */
    uint32_t dbg_rva, dbg_sz; /* DebugInfo */
};

int mdt_r2r_debug_open(mdt_r2r_debug **out, void *mem_ctx, const mdt_image *img)
{
    uint16_t major = 0;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_debug_open: NULL argument");
    *out = NULL;
    mdt__r2r_want w[2] = {{MDT__R2R_RUNTIME_FUNCTIONS, 1, 0, 0, 0},
                          {MDT__R2R_DEBUG_INFO, 1, 0, 0, 0}};
    if ((e = mdt__r2r_sections(w, 2, &major, img, "its code and debug info are")))
        return e;
    uint32_t rf_rva = w[0].rva, rf_sz = w[0].size, dbg_rva = w[1].rva, dbg_sz = w[1].size;
    /* both sections must be there, whole: checked once here, again at
     * each read (an image read on demand may change under us) */
    rd r;
    if ((e = mdt__pe_rva_reader(&r, img, rf_rva, rf_sz, "RuntimeFunctions")) ||
        (e = mdt__pe_rva_reader(&r, img, dbg_rva, dbg_sz, "DebugInfo")))
        return e;
    mdt_r2r_debug *d = talloc_zero(mem_ctx, mdt_r2r_debug);
    if (!d)
        return mdt__fail_simple(MDT_ENOMEM, "mdt_r2r_debug_open: out of memory");
    *d = (mdt_r2r_debug){img, major, rf_rva, rf_sz / 12, dbg_rva, dbg_sz};
    *out = d;
    return 0;
}

uint32_t mdt_r2r_debug_functions(const mdt_r2r_debug *d)
{
    return d ? d->nrf : 0;
}

int mdt_r2r_function_at(uint32_t *index, const mdt_r2r_debug *d, uint32_t rva)
{
    rd r;
    int e;
    if (!index || !d)
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_function_at: NULL argument");
    if ((e = mdt__pe_rva_reader(&r, d->img, d->rf_rva, d->nrf * 12, "RuntimeFunctions")))
        return e;
    /* sorted by begin RVA (the runtime's own lookup assumes it too) */
    uint32_t lo = 0, hi = d->nrf;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint32_t b = le32(r.base + (size_t)mid * 12);
        if (b < rva)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == d->nrf || le32(r.base + (size_t)lo * 12) != rva) {
        r.pos = lo < d->nrf ? (size_t)lo * 12 : r.len;
        return rd_fail(&r, MDT_ENOTFOUND, "no runtime function begins at RVA 0x%x", rva);
    }
    *index = lo;
    return 0;
}

/* A position given as an RVA, inside the DebugInfo reader r. */
static int seek_rva(rd *r, uint32_t sec_rva, uint64_t rva, const char *what)
{
    return mdt__native_seek(r, sec_rva, rva, what);
}

/* CoreCLR's nibble stream (nibblestream.h): low nibble first; a number is
 * 3 bits a nibble, high bit set while more follow. */
/* The element of DebugInfo's array for runtime function index. */
static int debug_at(rd *r, const mdt_r2r_debug *d, uint32_t index, uint32_t *at)
{
    int e = mdt__native_array_get(r, d->dbg_rva, index, at, "DebugInfo array");
    if (e == 1)
        return rd_fail(r, MDT_ENOTFOUND, "no debug info for method %u", index);
    return e;
}

struct nib {
    rd *r;
    int half; /* a high nibble is pending */
    uint8_t pending;
};

static int nib_u32(struct nib *s, uint32_t *v, const char *what)
{
    uint64_t x = 0;
    for (int i = 0; i < 12; i++) { /* 32 bits take at most 11 nibbles */
        uint8_t n;
        if (s->half) {
            n = s->pending;
            s->half = 0;
        } else {
            uint8_t b;
            int e = rd_u8(s->r, &b, what);
            if (e)
                return e;
            n = b & 15;
            s->pending = b >> 4;
            s->half = 1;
        }
        x = x << 3 | (n & 7);
        if (x > UINT32_MAX)
            return rd_fail(s->r, MDT_EBADIMAGE, "%s: a nibble-coded number over 32 bits", what);
        if (!(n & 8)) {
            *v = (uint32_t)x;
            return 0;
        }
    }
    return rd_fail(s->r, MDT_EBADIMAGE, "%s: a nibble-coded number of more than 11 nibbles", what);
}

static uint32_t source_2bits(uint32_t b)
{
    return (b & 1 ? MDT_R2R_SOURCE_CALL_INSTRUCTION : 0) | (b & 2 ? MDT_R2R_SOURCE_STACK_EMPTY : 0);
}

/* Decode the raw bounds at r's position (the blob's bounds, len bytes)
 * into out (up to cap); *n gets the count. */
static int bounds(rd *r, const mdt_r2r_debug *d, size_t len, mdt_r2r_bound *out, size_t cap,
                  size_t *n)
{
    rd b;
    int e;
    if ((e = rd_sub(r, &b, r->pos, len, "DebugInfo bounds", "DebugInfo bounds")))
        return e;
    struct nib s = {&b, 0, 0};
    uint32_t count;
    if ((e = nib_u32(&s, &count, "bounds count")))
        return e;
    if (count > MDT_R2R_BOUNDS_MAX)
        return rd_fail(&b, MDT_EBADIMAGE, "%u bounds (at most %u read)", count,
                       (unsigned)MDT_R2R_BOUNDS_MAX);
    *n = count;
    uint32_t native = 0;
    if (d->major < BITPACKED_SINCE) {
        for (uint32_t i = 0; i < count; i++) {
            uint32_t delta, il, src;
            if ((e = nib_u32(&s, &delta, "native offset delta")) ||
                (e = nib_u32(&s, &il, "IL offset")) || (e = nib_u32(&s, &src, "source kind")))
                return e;
            native += delta;
            if (i < cap)
                out[i] = (mdt_r2r_bound){il - 3u, native, 0, src};
        }
        return 0;
    }
    uint32_t wn, wi;
    if ((e = nib_u32(&s, &wn, "native delta width")) || (e = nib_u32(&s, &wi, "IL offset width")))
        return e;
    /* 2 bits of source kind, the delta's and the IL offset's widths (each
     * stored minus 1): an entry in at most 57 bits keeps the 64-bit
     * accumulator below 64 bits with a byte added */
    if (wn > 31 || wi > 31 || (uint64_t)wn + 1 + wi + 1 + 2 > 57)
        return rd_fail(&b, MDT_EUNSUPPORTED, "bounds entries of %u + %u + 2 bits", wn + 1, wi + 1);
    unsigned bits = wn + 1 + wi + 1 + 2;
    uint64_t acc = 0, mask = ((uint64_t)1 << bits) - 1;
    unsigned have = 0;
    for (uint32_t i = 0; i < count; i++) {
        while (have < bits) {
            uint8_t byte;
            if ((e = rd_u8(&b, &byte, "bounds entry")))
                return e;
            acc |= (uint64_t)byte << have;
            have += 8;
        }
        uint64_t x = acc & mask;
        acc >>= bits;
        have -= bits;
        uint32_t src = source_2bits((uint32_t)(x & 3));
        x >>= 2;
        native += (uint32_t)(x & (((uint64_t)1 << (wn + 1)) - 1));
        x >>= wn + 1;
        if (i < cap)
            out[i] = (mdt_r2r_bound){(uint32_t)x - 3u, native, 0, src};
    }
    return 0;
}

/* What the runtime makes of the raw list before a profiler sees it
 * (the debugger's sequence map, CoreCLR's DebuggerJitInfo::SetBoundaries
 * and ExportILToNativeMap): an entry that repeats the IL offset of the
 * one before it (call instructions aside) is dropped; each entry ends
 * where the next one that is not a call instruction starts; the last ends
 * with the code (0 here, MDT_R2R_SOURCE_END_UNKNOWN); then the call
 * instructions are left out. In place; returns the new count. */
static size_t as_runtime(mdt_r2r_bound *m, size_t n)
{
    const uint32_t call = MDT_R2R_SOURCE_CALL_INSTRUCTION;
    size_t k = 0;
    if (!n)
        return 0;
    for (size_t i = 0; i < n; i++) {
        mdt_r2r_bound cur = m[i];
        if (k > 0 && !(cur.source & call)) {
            const mdt_r2r_bound *last = &m[k - 1];
            if (last->source & call)
                last = k > 1 ? &m[k - 2] : NULL;
            if (last && !(last->source & call) && last->il == cur.il)
                continue;
        }
        m[k++] = cur;
    }
    for (size_t i = 0; i + 1 < k; i++) {
        size_t j = i + 1;
        while ((m[j].source & call) && j < k - 1)
            j++;
        m[i].native_end = m[j].native_start;
    }
    m[k - 1].native_end = 0;
    m[k - 1].source |= MDT_R2R_SOURCE_END_UNKNOWN;
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (!(m[i].source & call))
            m[w++] = m[i];
    return w;
}

int mdt_r2r_bounds(mdt_r2r_bound *out, size_t cap, size_t *n, const mdt_r2r_debug *d,
                   uint32_t index, unsigned flags)
{
    rd r;
    int e;
    uint32_t at = 0, back = 0, sz_bounds = 0, sz_vars = 0;
    if (!n || !d || (cap && !out) || (flags & ~MDT_R2R_BOUNDS_RUNTIME))
        return mdt__fail_simple(MDT_EINVAL, "mdt_r2r_bounds: NULL or bad argument");
    *n = 0;
    if (index >= d->nrf)
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_r2r_bounds: method %u is past the %u runtime functions", index,
                                d->nrf);
    if ((e = mdt__pe_rva_reader(&r, d->img, d->dbg_rva, d->dbg_sz, "DebugInfo")) ||
        (e = debug_at(&r, d, index, &at)) ||
        (e = seek_rva(&r, d->dbg_rva, at, "debug info of a method")) ||
        (e = mdt__native_unsigned(&r, &back, "debug info look-back")))
        return e;
    if (back) { /* shared with a method before: the blob is back bytes earlier */
        if (back > at)
            return rd_fail(&r, MDT_EBADIMAGE, "debug info look-back %u before RVA 0", back);
        if ((e = seek_rva(&r, d->dbg_rva, (uint64_t)at - back, "shared debug info")))
            return e;
    }
    struct nib s = {&r, 0, 0};
    if ((e = nib_u32(&s, &sz_bounds, "bounds size")))
        return e;
    if (sz_bounds == 0 && d->major >= BITPACKED_SINCE)
        return rd_fail(&r, MDT_EUNSUPPORTED,
                       "a fat debug info header (instrumented or OSR code): not read");
    if ((e = nib_u32(&s, &sz_vars, "variables size")))
        return e;
    (void)sz_vars;
    if (sz_bounds == 0)
        return 0; /* no bounds */
    size_t count = 0;
    if ((e = bounds(&r, d, sz_bounds, out, cap, &count)))
        return e;
    *n = count;
    if ((flags & MDT_R2R_BOUNDS_RUNTIME) && count <= cap)
        *n = as_runtime(out, count);
    return 0;
}

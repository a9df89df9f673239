/* The version resource (RT_VERSION, VS_VERSIONINFO in the Win32 resource
 * format "Version Information"): blocks of (wLength, wValueLength, wType,
 * a NUL-terminated UTF-16 key, padding to 4 bytes, the value, padding,
 * children). The root's value is VS_FIXEDFILEINFO (signature 0xFEEF04BD,
 * file and product versions, flags, OS, type, date); its children are
 * StringFileInfo (string tables keyed by language and code page, each of
 * String key/value pairs) and VarFileInfo (Var "Translation": language and
 * code page pairs). Every block is checked to lie inside its parent, and
 * nesting stops at the four levels the format has. */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "pe/pe_int.h"
#include "util/error.h"
#include "util/utf16.h"

#define RT_VERSION 16
#define FIXED_SIGNATURE 0xFEEF04BDu
#define MAX_STRINGS 4096

struct block {
    size_t start, end; /* the block, within the resource's bytes */
    uint16_t value_len, type;
    size_t key_at, key_units; /* the key's UTF-16 units, without the NUL */
    size_t value_at;
    size_t children_at;
};

static size_t align4(size_t x)
{
    return (x + 3) & ~(size_t)3;
}

static int parse_block(rd *r, size_t at, size_t limit, struct block *b)
{
    uint16_t len;
    int e;
    r->pos = at;
    if ((e = rd_need(r, 6, "version block header")))
        return e;
    len = le16(r->base + at);
    b->value_len = le16(r->base + at + 2);
    b->type = le16(r->base + at + 4);
    if (len < 6 || len > limit - at)
        return rd_fail(r, MDT_ETRUNC, "version block of 0x%x bytes in 0x%zx that are left", len,
                       limit - at);
    b->start = at;
    b->end = at + len;
    b->key_at = at + 6;
    for (b->key_units = 0;; b->key_units++) {
        size_t p = b->key_at + 2 * b->key_units;
        if (p + 2 > b->end) {
            r->pos = b->key_at;
            return rd_fail(r, MDT_EBADIMAGE, "version block key not NUL-terminated");
        }
        if (!r->base[p] && !r->base[p + 1])
            break;
    }
    b->value_at = align4(b->key_at + 2 * b->key_units + 2);
    if (b->value_at > b->end)
        b->value_at = b->end;
    /* Text values count UTF-16 units, binary ones bytes. */
    size_t vbytes = b->type == 1 ? (size_t)b->value_len * 2 : b->value_len;
    if (vbytes > b->end - b->value_at)
        vbytes = b->end - b->value_at;
    b->children_at = align4(b->value_at + vbytes);
    if (b->children_at > b->end)
        b->children_at = b->end;
    return 0;
}

static bool key_is(const rd *r, const struct block *b, const char *ascii)
{
    size_t n = strlen(ascii);
    if (b->key_units != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (r->base[b->key_at + 2 * i] != (uint8_t)ascii[i] || r->base[b->key_at + 2 * i + 1])
            return false;
    return true;
}

static char *text(void *mem, const rd *r, size_t at, size_t end)
{
    size_t n = 0;
    while (at + 2 * n + 2 <= end && (r->base[at + 2 * n] || r->base[at + 2 * n + 1]))
        n++;
    return mdt__utf16_to_utf8(mem, r->base + at, n);
}

static int fixed_info(mdt_version_info *v, rd *r, const struct block *b)
{
    const uint8_t *p = r->base + b->value_at;
    if (b->value_len < 52 || b->end - b->value_at < 52)
        return 0; /* no fixed part: allowed */
    if (le32(p) != FIXED_SIGNATURE) {
        r->pos = b->value_at;
        return rd_fail(r, MDT_EBADIMAGE, "VS_FIXEDFILEINFO signature 0x%08x (expected 0x%08x)",
                       le32(p), FIXED_SIGNATURE);
    }
    v->has_fixed = true;
    v->file_version[0] = le16(p + 10);
    v->file_version[1] = le16(p + 8);
    v->file_version[2] = le16(p + 14);
    v->file_version[3] = le16(p + 12);
    v->product_version[0] = le16(p + 18);
    v->product_version[1] = le16(p + 16);
    v->product_version[2] = le16(p + 22);
    v->product_version[3] = le16(p + 20);
    v->file_flags_mask = le32(p + 24);
    v->file_flags = le32(p + 28);
    v->file_os = le32(p + 32);
    v->file_type = le32(p + 36);
    v->file_subtype = le32(p + 40);
    v->file_date = (uint64_t)le32(p + 44) << 32 | le32(p + 48);
    return 0;
}

static int add_string(void *mem, mdt_version_info *v, size_t *cap, const char *table,
                      const char *key, const char *value, rd *r)
{
    if (v->nstrings == MAX_STRINGS)
        return rd_fail(r, MDT_EBADIMAGE, "more than %d version strings", MAX_STRINGS);
    if (v->nstrings == *cap) {
        size_t c = *cap ? *cap * 2 : 16;
        mdt_version_string *a = talloc_realloc(mem, v->strings, mdt_version_string, c);
        if (!a)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        v->strings = a;
        *cap = c;
    }
    v->strings[v->nstrings].table = table;
    v->strings[v->nstrings].key = key;
    v->strings[v->nstrings].value = value;
    v->nstrings++;
    return 0;
}

static int string_file_info(mdt_version_info *v, void *mem, rd *r, const struct block *sfi,
                            size_t *cap)
{
    struct block t, s;
    int e;
    for (size_t at = sfi->children_at; at + 6 <= sfi->end; at = align4(t.end)) {
        if ((e = parse_block(r, at, sfi->end, &t)))
            return e;
        char *table = text(mem, r, t.key_at, t.key_at + 2 * t.key_units);
        if (!table)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        for (size_t sat = t.children_at; sat + 6 <= t.end; sat = align4(s.end)) {
            if ((e = parse_block(r, sat, t.end, &s)))
                return e;
            char *key = text(mem, r, s.key_at, s.key_at + 2 * s.key_units);
            char *val = text(mem, r, s.value_at,
                             s.value_at + 2 * (size_t)s.value_len > s.end
                                 ? s.end
                                 : s.value_at + 2 * (size_t)s.value_len);
            if (!key || !val)
                return mdt__fail_simple(MDT_ENOMEM, "out of memory");
            if (!s.value_len)
                val[0] = '\0';
            if ((e = add_string(mem, v, cap, table, key, val, r)))
                return e;
        }
    }
    return 0;
}

static int var_file_info(mdt_version_info *v, void *mem, rd *r, const struct block *vfi)
{
    struct block b;
    int e;
    for (size_t at = vfi->children_at; at + 6 <= vfi->end; at = align4(b.end)) {
        if ((e = parse_block(r, at, vfi->end, &b)))
            return e;
        if (!key_is(r, &b, "Translation") || v->translations)
            continue;
        size_t n = b.value_len / 4;
        if (n > (b.end - b.value_at) / 4)
            n = (b.end - b.value_at) / 4;
        if (!n)
            continue;
        if (!(v->translations = talloc_array(mem, uint32_t, n)))
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        for (size_t i = 0; i < n; i++)
            v->translations[i] = le32(r->base + b.value_at + 4 * i);
        v->ntranslations = n;
    }
    return 0;
}

int mdt_version_info_read(void *mem_ctx, mdt_version_info **out, const mdt_image *img)
{
    mdt_win32res *res;
    size_t nres, cap = 0;
    mdt_version_info *v;
    struct block root, b;
    rd r;
    void *tmp;
    int e;
    if (!out || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_version_info_read: NULL argument");
    if (!(tmp = talloc_new(NULL)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if ((e = mdt_win32res_list(tmp, &res, &nres, img)))
        goto fail;
    size_t i;
    for (i = 0; i < nres; i++)
        if (!res[i].type_name && res[i].type_id == RT_VERSION)
            break;
    if (i == nres) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "resource directory";
        e = mdt__fail(MDT_ENOTFOUND, pl, "no version resource");
        goto fail;
    }
    if ((e = mdt__pe_rva_reader(&r, img, res[i].data_rva, res[i].size, "version resource")))
        goto fail;
    if (!(v = talloc_zero(tmp, mdt_version_info))) {
        e = mdt__fail_simple(MDT_ENOMEM, "out of memory");
        goto fail;
    }
    if ((e = parse_block(&r, 0, r.len, &root)))
        goto fail;
    if (!key_is(&r, &root, "VS_VERSION_INFO")) {
        r.pos = root.key_at;
        e = rd_fail(&r, MDT_EBADIMAGE, "version resource key is not VS_VERSION_INFO");
        goto fail;
    }
    if ((e = fixed_info(v, &r, &root)))
        goto fail;
    for (size_t at = root.children_at; at + 6 <= root.end; at = align4(b.end)) {
        if ((e = parse_block(&r, at, root.end, &b)))
            goto fail;
        if (key_is(&r, &b, "StringFileInfo"))
            e = string_file_info(v, v, &r, &b, &cap);
        else if (key_is(&r, &b, "VarFileInfo"))
            e = var_file_info(v, v, &r, &b);
        if (e)
            goto fail;
    }
    *out = talloc_steal(mem_ctx, v);
    talloc_free(tmp);
    return 0;
fail:
    talloc_free(tmp);
    return e;
}

/* The System.Resources format (.resources files): what
 * System.Resources.ResourceWriter writes and ResourceReader reads. No
 * library reads it, and its specification is the reader itself, so it is
 * written here from the format's layout:
 *
 *   ResourceManager header: int32 magic 0xBEEFCACE, int32 header version,
 *     int32 byte count of the rest of the header; in version 1 that rest
 *     is two strings (the reader's type, the resource set's type), in a
 *     later version it is skipped.
 *   Resource set header: int32 version (1 or 2), int32 entry count, int32
 *     type count, the type names (strings), padding ("PAD"...) to a
 *     multiple of 8 bytes from the start, the entries' name hashes
 *     (int32 each), the entries' name positions (int32 each, from the
 *     start of the name section), int32 data section offset (from the
 *     start); the name section follows.
 *   Name section: per entry a string of UTF-16LE (its byte length
 *     7-bit-encoded) and int32 value offset (from the data section).
 *   Values: version 2 a 7-bit-encoded ResourceTypeCode then the value
 *     (primitives little-endian; strings length-prefixed UTF-8; byte
 *     arrays and streams int32 length then bytes; a user type's
 *     serialised bytes); version 1 a 7-bit-encoded index into the type
 *     table (-1 for null).
 *
 * Strings are BinaryWriter's: a 7-bit-encoded length (at most 5 bytes)
 * then the bytes. Every count and offset is checked against the data:
 * each entry takes 8 bytes of the index, so a count larger than the data
 * can hold is refused before anything is allocated. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/resources.h>

#include "util/error.h"
#include "util/reader.h"
#include "util/utf16.h"

static const char *const primitive[] = {
    [MDT_RESTYPE_NULL] = "null",
    [MDT_RESTYPE_STRING] = "System.String",
    [MDT_RESTYPE_BOOLEAN] = "System.Boolean",
    [MDT_RESTYPE_CHAR] = "System.Char",
    [MDT_RESTYPE_BYTE] = "System.Byte",
    [MDT_RESTYPE_SBYTE] = "System.SByte",
    [MDT_RESTYPE_INT16] = "System.Int16",
    [MDT_RESTYPE_UINT16] = "System.UInt16",
    [MDT_RESTYPE_INT32] = "System.Int32",
    [MDT_RESTYPE_UINT32] = "System.UInt32",
    [MDT_RESTYPE_INT64] = "System.Int64",
    [MDT_RESTYPE_UINT64] = "System.UInt64",
    [MDT_RESTYPE_SINGLE] = "System.Single",
    [MDT_RESTYPE_DOUBLE] = "System.Double",
    [MDT_RESTYPE_DECIMAL] = "System.Decimal",
    [MDT_RESTYPE_DATETIME] = "System.DateTime",
    [MDT_RESTYPE_TIMESPAN] = "System.TimeSpan",
};

/* Sizes of the fixed-size values, by type code. */
static const uint8_t fixed_size[] = {
    [MDT_RESTYPE_NULL] = 0,     [MDT_RESTYPE_BOOLEAN] = 1,  [MDT_RESTYPE_CHAR] = 2,
    [MDT_RESTYPE_BYTE] = 1,     [MDT_RESTYPE_SBYTE] = 1,    [MDT_RESTYPE_INT16] = 2,
    [MDT_RESTYPE_UINT16] = 2,   [MDT_RESTYPE_INT32] = 4,    [MDT_RESTYPE_UINT32] = 4,
    [MDT_RESTYPE_INT64] = 8,    [MDT_RESTYPE_UINT64] = 8,   [MDT_RESTYPE_SINGLE] = 4,
    [MDT_RESTYPE_DOUBLE] = 8,   [MDT_RESTYPE_DECIMAL] = 16, [MDT_RESTYPE_DATETIME] = 8,
    [MDT_RESTYPE_TIMESPAN] = 8,
};

const char *mdt_resources_type_name(uint32_t code)
{
    if (code < sizeof primitive / sizeof primitive[0])
        return primitive[code];
    if (code == MDT_RESTYPE_BYTEARRAY)
        return "System.Byte[]";
    if (code == MDT_RESTYPE_STREAM)
        return "System.IO.Stream";
    return NULL;
}

bool mdt_resources_is(const uint8_t *data, size_t len)
{
    return data && len >= 4 && le32(data) == MDT_RESOURCES_MAGIC;
}

static int bad(const rd *r, size_t pos, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = r->file;
    pl.region = r->region;
    pl.offset = pos;
    return mdt__fail(MDT_EBADIMAGE, pl, "%s", what);
}

static int trunc_at(const rd *r, size_t pos, const char *what)
{
    mdt_place pl = MDT_PLACE_NONE;
    pl.file = r->file;
    pl.region = r->region;
    pl.offset = pos;
    return mdt__fail(MDT_ETRUNC, pl, "%s runs past the data (0x%zx bytes)", what, r->len);
}

/* A 7-bit-encoded unsigned int (BinaryReader.Read7BitEncodedInt: at most
 * five bytes, the fifth holding the top four bits). */
static int rd_7bit(rd *r, uint32_t *v, const char *what)
{
    uint32_t x = 0;
    size_t start = r->pos;
    for (unsigned shift = 0; shift < 35; shift += 7) {
        uint8_t b;
        int e = rd_u8(r, &b, what);
        if (e)
            return e;
        if (shift == 28 && b > 0x0f)
            return bad(r, start, "a 7-bit-encoded number longer than 32 bits");
        x |= (uint32_t)(b & 0x7f) << shift;
        if (!(b & 0x80)) {
            *v = x;
            return 0;
        }
    }
    return bad(r, start, "a 7-bit-encoded number longer than 32 bits");
}

static int rd_i32(rd *r, int32_t *v, const char *what)
{
    uint32_t u;
    int e = rd_u32(r, &u, what);
    if (!e)
        *v = (int32_t)u;
    return e;
}

/* A BinaryWriter string of UTF-8 bytes, copied (NUL-terminated, cut at an
 * embedded NUL) under mem; *len the stored byte count. */
static int rd_string(void *mem, rd *r, char **s, const char *what)
{
    uint32_t n;
    size_t at = r->pos;
    int e = rd_7bit(r, &n, what);
    if (e)
        return e;
    if (n > rd_left(r))
        return trunc_at(r, at, what);
    *s = talloc_strndup(mem, (const char *)r->base + r->pos, n);
    if (!*s)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
    r->pos += n;
    return 0;
}

static int by_offset(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The value of entry e at absolute position pos: its type code, and its
 * size where the type says it. A user type's size is left for later. */
static int value(void *mem, mdt_resource_set *set, mdt_resource_entry *e, rd *r, size_t pos,
                 bool *sized)
{
    uint32_t code;
    int err;
    r->pos = pos;
    if ((err = rd_7bit(r, &code, "a value's type code")))
        return err;
    if (set->version == 1) {
        /* An index into the type table, -1 (0xFFFFFFFF) for null. */
        if (code == UINT32_MAX) {
            e->type_code = MDT_RESTYPE_NULL;
        } else if (code >= set->ntypes) {
            return bad(r, pos, "a value's type index is past the type table");
        } else {
            e->type_code = MDT_RESTYPE_USER + code;
        }
    } else {
        e->type_code = code;
    }
    e->offset = r->pos;
    *sized = true;
    if (e->type_code >= MDT_RESTYPE_USER) {
        if (e->type_code - MDT_RESTYPE_USER >= set->ntypes)
            return bad(r, pos, "a value's type code is past the type table");
        e->type = set->types[e->type_code - MDT_RESTYPE_USER];
        /* Version 1 files name System.String and the primitives in the
         * type table too; a string there is still a string. */
        if (strncmp(e->type, "System.String,", 14) == 0 || strcmp(e->type, "System.String") == 0) {
            char *s;
            size_t at = r->pos;
            if ((err = rd_string(mem, r, &s, "a string value")))
                return err;
            e->string = s;
            e->size = r->pos - at;
            return 0;
        }
        *sized = false;
        return 0;
    }
    e->type = mdt_resources_type_name(e->type_code);
    if (!e->type)
        return bad(r, pos, "a value's type code is none the format has");
    if (e->type_code == MDT_RESTYPE_STRING) {
        char *s;
        size_t at = r->pos;
        if ((err = rd_string(mem, r, &s, "a string value")))
            return err;
        e->string = s;
        e->size = r->pos - at;
        return 0;
    }
    if (e->type_code == MDT_RESTYPE_BYTEARRAY || e->type_code == MDT_RESTYPE_STREAM) {
        int32_t n;
        size_t at = r->pos;
        if ((err = rd_i32(r, &n, "a byte array's length")))
            return err;
        if (n < 0)
            return bad(r, at, "a byte array of negative length");
        if ((uint32_t)n > rd_left(r))
            return trunc_at(r, at, "a byte array");
        e->size = 4 + (uint64_t)(uint32_t)n; /* with its length, as ResourceReader gives it */
        return 0;
    }
    e->size = fixed_size[e->type_code];
    if (e->size > rd_left(r))
        return trunc_at(r, r->pos, e->type);
    return 0;
}

int mdt_resources_parse(void *mem_ctx, mdt_resource_set **out, const uint8_t *data, size_t len,
                        const char *name)
{
    rd r = rd_make(name, ".resources", data, len, UINT64_MAX);
    int32_t hver, skip, ver, count, ntypes, data_off;
    uint32_t magic;
    mdt_resource_set *set;
    int e;
    if (!out || (!data && len))
        return mdt__fail_simple(MDT_EINVAL, "mdt_resources_parse: NULL argument");
    *out = NULL;
    if ((e = rd_u32(&r, &magic, "the magic number")))
        return e;
    if (magic != MDT_RESOURCES_MAGIC)
        return bad(&r, 0, "no System.Resources magic number (0xBEEFCACE)");
    if ((e = rd_i32(&r, &hver, "the header's version")) ||
        (e = rd_i32(&r, &skip, "the header's length")))
        return e;
    if (hver < 0 || skip < 0)
        return bad(&r, 4, "a negative header version or length");
    if ((size_t)skip > rd_left(&r))
        return trunc_at(&r, 8, "the ResourceManager header");
    if (!(set = talloc_zero(mem_ctx, mdt_resource_set)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
    set->header_version = (uint32_t)hver;
    size_t header_end = r.pos + (size_t)skip;
    if (hver == 1) {
        char *s;
        rd h = r;
        h.len = header_end; /* the type names lie inside the header */
        if ((e = rd_string(set, &h, &s, "the reader's type name")))
            goto fail;
        set->reader_type = s;
        if ((e = rd_string(set, &h, &s, "the resource set's type name")))
            goto fail;
        set->set_type = s;
    }
    r.pos = header_end;

    if ((e = rd_i32(&r, &ver, "the resource set's version")))
        goto fail;
    if (ver != 1 && ver != 2) {
        e = bad(&r, header_end, "a resource set version other than 1 or 2");
        goto fail;
    }
    set->version = (uint32_t)ver;
    if ((e = rd_i32(&r, &count, "the entry count")) || (e = rd_i32(&r, &ntypes, "the type count")))
        goto fail;
    if (count < 0 || ntypes < 0) {
        e = bad(&r, header_end + 4, "a negative entry or type count");
        goto fail;
    }
    if ((uint32_t)ntypes > MDT_RESOURCES_MAX_TYPES || (uint32_t)count > MDT_RESOURCES_MAX_ENTRIES) {
        e = mdt__fail_simple(MDT_EUNSUPPORTED, "%s: %d entries and %d types: more than %u and %u",
                             name ? name : ".resources", count, ntypes, MDT_RESOURCES_MAX_ENTRIES,
                             MDT_RESOURCES_MAX_TYPES);
        goto fail;
    }
    /* Each type name takes at least a byte: a count the data cannot hold
     * is refused before the table is allocated. */
    if ((uint32_t)ntypes > rd_left(&r)) {
        e = trunc_at(&r, r.pos, "the type table");
        goto fail;
    }
    set->ntypes = (size_t)ntypes;
    if (ntypes && !(set->types = talloc_zero_array(set, const char *, (size_t)ntypes))) {
        e = mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
        goto fail;
    }
    for (int32_t i = 0; i < ntypes; i++) {
        char *s;
        if ((e = rd_string(set, &r, &s, "a type name")))
            goto fail;
        set->types[i] = s;
    }
    /* Padding to a multiple of 8 from the start of the data. */
    if (r.pos % 8) {
        size_t pad = 8 - r.pos % 8;
        if ((e = rd_need(&r, pad, "the padding")))
            goto fail;
        r.pos += pad;
    }
    size_t hashes = r.pos;
    if ((size_t)count > rd_left(&r) / 8) {
        e = trunc_at(&r, hashes, "the name hashes and positions");
        goto fail;
    }
    size_t positions = hashes + 4 * (size_t)count;
    r.pos = positions + 4 * (size_t)count;
    if ((e = rd_i32(&r, &data_off, "the data section's offset")))
        goto fail;
    size_t names = r.pos;
    if (data_off < 0 || (size_t)data_off > len || (size_t)data_off < names) {
        e = bad(&r, r.pos - 4,
                "the data section's offset is outside the data or before the "
                "names");
        goto fail;
    }
    set->n = (size_t)count;
    if (count && !(set->entries = talloc_zero_array(set, mdt_resource_entry, (size_t)count))) {
        e = mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
        goto fail;
    }
    /* Where each value starts (its type code), for the sizes of user
     * types; and what the names and strings copied so far take: entries
     * may share a name or a value, so a budget keeps the copies within a
     * multiple of the input. */
    uint64_t *starts = talloc_array(set, uint64_t, set->n ? set->n : 1);
    size_t budget = 2 * len + 65536;
    bool unsized = false;
    if (!starts) {
        e = mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
        goto fail;
    }
    for (int32_t i = 0; i < count; i++) {
        mdt_resource_entry *en = &set->entries[i];
        int32_t npos, voff;
        uint32_t nbytes;
        bool sized;
        size_t at = positions + 4 * (size_t)i;
        npos = (int32_t)le32(data + at);
        if (npos < 0 || (size_t)npos >= (size_t)data_off - names) {
            e = bad(&r, at, "a name position outside the name section");
            goto fail;
        }
        rd nr = r;
        nr.len = (size_t)data_off; /* names lie between the index and the data */
        nr.pos = names + (size_t)npos;
        if ((e = rd_7bit(&nr, &nbytes, "an entry's name length")))
            goto fail;
        if (nbytes % 2) {
            e = bad(&nr, nr.pos, "an entry's name of an odd number of bytes (not UTF-16)");
            goto fail;
        }
        if ((e = rd_need(&nr, nbytes, "an entry's name")))
            goto fail;
        if (nbytes > budget) {
            e = mdt__fail_simple(MDT_EUNSUPPORTED,
                                 "%s: the entries' names and strings take "
                                 "more than twice the data: entries share them",
                                 name ? name : ".resources");
            goto fail;
        }
        budget -= nbytes;
        if (!(en->name = mdt__utf16_to_utf8(set, nr.base + nr.pos, nbytes / 2))) {
            e = mdt__fail_simple(MDT_ENOMEM, "out of memory reading a .resources file");
            goto fail;
        }
        nr.pos += nbytes;
        if ((e = rd_i32(&nr, &voff, "an entry's value offset")))
            goto fail;
        if (voff < 0 || (size_t)voff >= len - (size_t)data_off) {
            e = bad(&nr, nr.pos - 4, "an entry's value offset is past the data");
            goto fail;
        }
        rd vr = r;
        starts[i] = (size_t)data_off + (size_t)voff;
        if ((e = value(set, set, en, &vr, (size_t)data_off + (size_t)voff, &sized)))
            goto fail;
        unsized |= !sized;
        if (en->string) {
            if (en->size > budget) {
                e = mdt__fail_simple(MDT_EUNSUPPORTED,
                                     "%s: the entries' names and strings take "
                                     "more than twice the data: entries share them",
                                     name ? name : ".resources");
                goto fail;
            }
            budget -= en->size;
        }
    }
    /* A user type's value runs to the next value's type code, or to the
     * end: the smallest start past its offset, by binary search. */
    if (unsized) {
        qsort(starts, set->n, sizeof *starts, by_offset);
        for (size_t i = 0; i < set->n; i++) {
            mdt_resource_entry *en = &set->entries[i];
            if (en->type_code < MDT_RESTYPE_USER || en->string)
                continue;
            size_t lo = 0, hi = set->n;
            while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (starts[mid] <= en->offset)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            en->size = (lo < set->n ? starts[lo] : len) - en->offset;
        }
    }
    talloc_free(starts);
    *out = set;
    return 0;
fail:
    talloc_free(set);
    return e;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
const char *mdt_restype_name(uint32_t code)
{
    return mdt_resources_type_name(code);
}
/* api-rename: on */

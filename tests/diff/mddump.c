/* mddump: print what libmdtools decodes from one image, one fact per line,
 * for tests/diff/monodis-diff.py to compare with monodis (ECMA-335 II.22
 * tables, II.24.2 streams and heaps, II.22.2/II.22.5 identities). It uses
 * the public API only, and the table loop is driven by the schema
 * (mdt_table_schema_get), so every column of every table is printed with
 * the decoder its kind calls for.
 *
 * Output (fields separated by TAB; strings escaped as described at esc()):
 *   image  KIND
 *   rows   TABLE N                         every table of the schema
 *   row    TABLE RID COL=VALUE ...         every row of every table
 *       U8/U16/U32   0xHEX
 *       STR          the string
 *       GUID         INDEX:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx (empty for 0)
 *       BLOB         INDEX:HEXBYTES
 *       TAB/CODED    0xTOKEN (table << 24 | rid)
 *       LIST         0xTOKEN, and COL#=FIRST+COUNT from mdt_row_range
 *     a cell that fails to decode prints "!" and the error message
 *   heap   NAME SIZE [HEXBYTES]            the four heaps; bytes for #Blob
 *   str    OFFSET STRING                   #Strings walked entry by entry
 *   us     OFFSET FLAG UTF16HEX UTF8       #US walked entry by entry
 *   asm    NAME VERSION CULTURE FLAGS HASHALG TOKEN FORMATTED
 *   asmref RID  (same fields)
 *   error  MESSAGE                         anything that failed
 * Exit status: 0, or 1 when the image does not open or anything failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/mdtools.h>

static int failures;

/* Strings go out byte for byte except TAB, LF, CR, backslash and the other
 * control bytes, which become \t \n \r \\ \xHH: one record stays one line
 * and the driver can undo the escaping exactly. */
static void esc(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        switch (c) {
        case '\t': fputs("\\t", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        default:
            if (c < 0x20 || c == 0x7f)
                printf("\\x%02x", c);
            else
                putchar(c);
        }
    }
}

static void hex(const uint8_t *p, size_t len)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < len; i++) {
        putchar(digits[p[i] >> 4]);
        putchar(digits[p[i] & 15]);
    }
}

static void print_error(void)
{
    char msg[512];
    mdt_error_message(msg, sizeof msg);
    putchar('!');
    esc(msg, strlen(msg));
    failures++;
}

static void print_cell(const mdt_row *row, unsigned col, const mdt_column_schema *cs)
{
    uint32_t raw = mdt_row_raw(row, col);
    switch (cs->kind) {
    case MDT_COLK_U8:
    case MDT_COLK_U16:
    case MDT_COLK_U32: printf("0x%x", raw); break;
    case MDT_COLK_STR: {
        const char *s;
        size_t len;
        if (mdt_row_string(&s, &len, row, col) == 0)
            esc(s, len);
        else
            print_error();
        break;
    }
    case MDT_COLK_GUID: {
        const uint8_t *g;
        char buf[37];
        if (mdt_row_guid(&g, row, col) != 0)
            print_error();
        else
            printf("%u:%s", raw, g ? mdt_heap_guid_format(buf, g) : "");
        break;
    }
    case MDT_COLK_BLOB: {
        const uint8_t *data;
        uint32_t len;
        if (mdt_row_blob(&data, &len, row, col) != 0) {
            print_error();
        } else {
            printf("%u:", raw);
            hex(data, len);
        }
        break;
    }
    case MDT_COLK_TAB:
    case MDT_COLK_LIST:
    case MDT_COLK_CODED: {
        uint32_t tok;
        if (mdt_row_token(&tok, row, col) == 0)
            printf("0x%08x", tok);
        else
            print_error();
        if (cs->kind == MDT_COLK_LIST) {
            uint32_t first, count;
            printf("\t%s#=", cs->name);
            if (mdt_row_range(&first, &count, row, col) == 0)
                printf("%u+%u", first, count);
            else
                print_error();
        }
        break;
    }
    default: printf("!unknown column kind %u", cs->kind); failures++;
    }
}

static void dump_tables(const mdt_image *img)
{
    for (unsigned id = 0; id < MDT_TABLE_MAX; id++) {
        const mdt_table_schema *s = mdt_table_schema_get(id);
        if (s && s->name)
            printf("rows\t%s\t%u\n", s->name, mdt_table_rows(img, id));
    }
    for (unsigned id = 0; id < MDT_TABLE_MAX; id++) {
        const mdt_table_schema *s = mdt_table_schema_get(id);
        uint32_t n = mdt_table_rows(img, id);
        if (!s || !s->name)
            continue;
        for (uint32_t rid = 1; rid <= n; rid++) {
            mdt_row row;
            printf("row\t%s\t%u", s->name, rid);
            if (mdt_row_get(&row, img, id, rid) != 0) {
                putchar('\t');
                print_error();
                putchar('\n');
                continue;
            }
            for (unsigned c = 0; c < s->ncols; c++) {
                printf("\t%s=", s->cols[c].name);
                print_cell(&row, c, &s->cols[c]);
            }
            putchar('\n');
        }
    }
}

/* The bytes of a stream as the file holds them: the stream table gives its
 * offset from the metadata root, md_info the root's place in the buffer. */
static const uint8_t *stream_bytes(const mdt_image *img, const char *name, uint32_t *size)
{
    const mdt_md_info *md = mdt_image_md_info(img);
    size_t blen;
    const uint8_t *base = mdt_image_bytes(&blen, img);
    for (size_t i = 0; i < md->nstreams; i++) {
        const mdt_stream_info *st = mdt_image_stream(img, i);
        if (!st->used || strcmp(st->name, name) != 0)
            continue;
        if (md->file_offset + st->offset > blen || st->size > blen - md->file_offset - st->offset)
            return NULL;
        *size = st->size;
        return base + md->file_offset + st->offset;
    }
    return NULL;
}

static void dump_heaps(const mdt_image *img)
{
    static const struct {
        int heap;
        const char *name;
    } heaps[] = {{MDT_HEAP_STRINGS, "#Strings"},
                 {MDT_HEAP_US, "#US"},
                 {MDT_HEAP_BLOB, "#Blob"},
                 {MDT_HEAP_GUID, "#GUID"}};
    for (size_t i = 0; i < sizeof heaps / sizeof heaps[0]; i++) {
        printf("heap\t%s\t%u", heaps[i].name, mdt_heap_size(img, heaps[i].heap));
        if (heaps[i].heap == MDT_HEAP_BLOB) {
            uint32_t size = 0;
            const uint8_t *p = stream_bytes(img, "#Blob", &size);
            putchar('\t');
            if (p)
                hex(p, size);
        }
        putchar('\n');
    }

    uint32_t size = mdt_heap_size(img, MDT_HEAP_STRINGS);
    for (uint32_t off = 0; off < size;) {
        const char *s;
        size_t len;
        printf("str\t0x%x\t", off);
        if (mdt_heap_string(&s, &len, img, off) != 0) {
            print_error();
            putchar('\n');
            break;
        }
        esc(s, len);
        putchar('\n');
        off += (uint32_t)len + 1;
    }

    /* #US entries: a compressed length, then that many bytes; the walk
     * needs the raw heap for the length prefix, mdt_heap_us decodes. */
    uint32_t us_size = 0;
    const uint8_t *us = stream_bytes(img, "#US", &us_size);
    for (uint32_t off = 0; us && off < us_size;) {
        const uint8_t *units;
        uint32_t nunits, n;
        unsigned used;
        int flag;
        printf("us\t0x%x\t", off);
        if (mdt_heap_decode_compressed_u32(&n, &used, us + off, us_size - off) != 0 ||
            mdt_heap_us(&units, &nunits, &flag, img, off) != 0) {
            print_error();
            putchar('\n');
            break;
        }
        void *tmp = talloc_new(NULL);
        char *utf8;
        size_t len;
        int replaced;
        printf("%d\t", flag);
        hex(units, (size_t)nunits * 2);
        putchar('\t');
        if (mdt_heap_utf16_to_utf8(tmp, &utf8, &len, &replaced, units, nunits) == 0)
            esc(utf8, len);
        else
            print_error();
        talloc_free(tmp);
        putchar('\n');
        off += used + n;
    }
}

static void print_identity(const mdt_identity *id)
{
    char buf[512];
    esc(id->name, strlen(id->name));
    printf("\t%u.%u.%u.%u\t", id->version[0], id->version[1], id->version[2], id->version[3]);
    esc(id->culture, strlen(id->culture));
    printf("\t0x%x\t0x%x\t", id->flags, id->hash_alg);
    if (id->has_token)
        hex(id->public_key_token, 8);
    else
        putchar('-');
    putchar('\t');
    mdt_identity_format(buf, sizeof buf, id);
    esc(buf, strlen(buf));
    putchar('\n');
}

static void dump_identities(const mdt_image *img)
{
    mdt_identity id;
    if (mdt_table_rows(img, MDT_TABLE_Assembly)) {
        if (mdt_assembly_identity(&id, img) == 0) {
            printf("asm\t");
            print_identity(&id);
        } else {
            printf("error\t");
            print_error();
            putchar('\n');
        }
    }
    for (uint32_t rid = 1; rid <= mdt_table_rows(img, MDT_TABLE_AssemblyRef); rid++) {
        if (mdt_assemblyref_identity(&id, img, rid) == 0) {
            printf("asmref\t%u\t", rid);
            print_identity(&id);
        } else {
            printf("error\t");
            print_error();
            putchar('\n');
        }
    }
}

int main(int argc, char **argv)
{
    void *ctx;
    mdt_image *img;
    static char outbuf[1 << 16];

    if (argc != 2) {
        fprintf(stderr, "usage: %s IMAGE\n", argv[0]);
        return 2;
    }
    setvbuf(stdout, outbuf, _IOFBF, sizeof outbuf);
    ctx = talloc_new(NULL);
    if (mdt_image_open_file(ctx, &img, argv[1], 0) != 0) {
        printf("error\t");
        print_error();
        putchar('\n');
        talloc_free(ctx);
        return 1;
    }
    printf("image\t%s\n", mdt_image_kind_name(mdt_image_kind(img)));
    dump_tables(img);
    dump_heaps(img);
    dump_identities(img);
    talloc_free(ctx);
    if (fflush(stdout) != 0)
        return 1;
    return failures ? 1 : 0;
}

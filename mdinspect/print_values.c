/* mdinspect's printer, values: each value call (string, number, token,
 * flags, blob, ...) formats its text in text mode or writes its JSON in
 * JSON mode, never both; notes and text-only lines. */
#include "config.h"

#include <assert.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/heaps.h>

#include "common/hex.h"
#include "print_int.h"

/* Every value starts here: mdi_note() applies to this value only, and a
 * value outside any record becomes a record of its own. */
static bool value_begin(mdi_printer *p)
{
    p->last = LAST_NONE;
    p->last_obj = 0;
    if (p->depth)
        return false;
    mdi_record_begin(p);
    return true;
}

static void value_end(mdi_printer *p, bool own)
{
    if (own)
        mdi_record_end(p);
}

/* The common path of every value: the text (formatted only in text mode,
 * by the caller) and the JSON value (written only in JSON mode, after its
 * key). */
#define VALUE(p, key, label, TEXT_EXPR, RIGHT, JSON_STMT)                                          \
    do {                                                                                           \
        bool own_ = value_begin(p);                                                                \
        if (label && pr_text_on(p))                                                                \
            pt_text_put(p, label, TEXT_EXPR, RIGHT);                                               \
        else if (pr_json_on(p) && pj_member(p, key))                                               \
            JSON_STMT;                                                                             \
        value_end(p, own_);                                                                        \
    } while (0)

void mdi_str(mdi_printer *p, const char *key, const char *label, const char *s)
{
    VALUE(p, key, label, s ? pt_arena_text(p, s, strlen(s), false) : pt_arena_strndup(p, "-", 1),
          false, pj_str0(p, s));
}

void mdi_quoted(mdi_printer *p, const char *key, const char *label, const char *s, size_t len)
{
    VALUE(p, key, label, pt_arena_text(p, s, len, true), false, pj_string(p, s, len));
}

/* Decimal without printf: counts fill whole columns of long tables. */
static char *uint_text(mdi_printer *p, uint64_t v)
{
    char digits[24];
    size_t n = 0;
    do
        digits[sizeof digits - ++n] = (char)('0' + v % 10);
    while ((v /= 10));
    return pt_arena_strndup(p, digits + sizeof digits - n, n);
}

void mdi_uint(mdi_printer *p, const char *key, const char *label, uint64_t v)
{
    VALUE(p, key, label, uint_text(p, v), true, pj_uint(p, v));
}

void mdi_int(mdi_printer *p, const char *key, const char *label, int64_t v)
{
    VALUE(p, key, label, pt_arena_printf(p, "%" PRId64, v), true, pj_int(p, v));
}

/* JSON has no NaN or infinities: those are the strings JavaScript's
 * Number() reads back. */
void mdi_real(mdi_printer *p, const char *key, const char *label, double v, const char *text)
{
    VALUE(p, key, label, pt_arena_strndup(p, text, strlen(text)), true, pj_real(p, v));
}

void mdi_hex(mdi_printer *p, const char *key, const char *label, uint64_t v, int digits)
{
    VALUE(p, key, label, pt_arena_printf(p, "0x%0*" PRIx64, digits, v), false, pj_uint(p, v));
}

/* "0xTTRRRRRR" without printf: tokens fill most tables. */
static char *token_text(mdi_printer *p, uint32_t token)
{
    char *s = pt_arena_alloc(p, 11);
    if (!s)
        return NULL;
    *mdi_hex_token(s, token) = '\0';
    return s;
}

void mdi_token(mdi_printer *p, const char *key, const char *label, uint32_t token)
{
    VALUE(p, key, label, token_text(p, token), false, pj_token(p, token));
}

void mdi_bool(mdi_printer *p, const char *key, const char *label, bool v)
{
    VALUE(p, key, label, pt_arena_strndup(p, v ? "yes" : "no", v ? 3 : 2), false,
          pj_raw(p, v ? "true" : "false"));
}

void mdi_guid(mdi_printer *p, const char *key, const char *label, const uint8_t *guid)
{
    char b[37];
    if (guid)
        mdt_heap_guid_format(b, guid);
    VALUE(p, key, label, talloc_strdup(p->blk, guid ? b : "nil"), false,
          pj_str0(p, guid ? b : NULL));
}

void mdi_none(mdi_printer *p, const char *key, const char *label, const char *txt)
{
    bool own = value_begin(p);
    if (label && txt && pr_text_on(p))
        pt_text_put(p, label, pt_arena_strndup(p, txt, strlen(txt)), false);
    else if (pr_json_on(p) && pj_member(p, key))
        pj_raw(p, "null");
    value_end(p, own);
}

void mdi_error(mdi_printer *p, const char *key, const char *label, const char *msg)
{
    VALUE(p, key, label,
          talloc_asprintf(p->blk, "<error: %s>", mdi_escape(p->blk, msg, strlen(msg), false)),
          false, pj_error(p, msg));
}

void mdi_item_error(mdi_printer *p, const char *key, const char *msg)
{
    struct frame *f = pr_top(p);
    assert(f && f->kind == F_ITEM);
    if (pr_text_on(p)) {
        struct table *t = pt_item_table(p);
        if (t && t->nrows) {
            t->span[t->nrows - 1] =
                talloc_asprintf(p->blk, "<error: %s>", mdi_escape(p->blk, msg, strlen(msg), false));
            if (!t->span[t->nrows - 1])
                p->failed = true;
        }
    } else if (pr_json_on(p) && pj_member(p, key)) {
        pj_error(p, msg);
    }
}

bool mdi_flag_set(uint32_t v, const mdi_flagname *n)
{
    return n->mask ? (v & n->mask) == n->bit : (v & n->bit) != 0;
}

void mdi_flags(mdi_printer *p, const char *key, const char *label, uint32_t v,
               const mdi_flagname *names)
{
    uint32_t rest = v;
    bool own = value_begin(p);
    if (label && pr_text_on(p)) {
        /* Names, not hex: "Public, BeforeFieldInit"; bits without a name
         * as hex after them; "none" for 0 without a name. */
        char *s = talloc_strdup(p->blk, "");
        for (const mdi_flagname *n = names; s && n->name; n++) {
            if (!mdi_flag_set(v, n))
                continue;
            s = talloc_asprintf_append(s, "%s%s", s[0] ? ", " : "", n->name);
            rest &= ~(n->mask ? n->mask : n->bit);
        }
        if (s && rest)
            s = talloc_asprintf_append(s, "%s0x%" PRIx32, s[0] ? ", " : "", rest);
        if (s && !s[0])
            s = talloc_strdup_append(s, "none");
        pt_text_put(p, label, s, false);
    } else if (pr_json_on(p) && pj_member(p, key)) {
        /* `key` as a number, then `key`_names: the names, unknown bits
         * as "0x..." */
        char nk[128];
        bool more = false;
        pj_int(p, v);
        snprintf(nk, sizeof nk, "%s_names", key ? key : "value");
        if (pj_member(p, nk)) {
            pj_put(p, "[", 1);
            for (const mdi_flagname *n = names; n->name; n++) {
                if (!mdi_flag_set(v, n))
                    continue;
                if (more)
                    pj_put(p, ",", 1);
                more = true;
                pj_str0(p, n->name);
                rest &= ~(n->mask ? n->mask : n->bit);
            }
            for (int b = 0; b < 32; b++)
                if (rest & (1u << b)) {
                    char hb[12];
                    int k = snprintf(hb, sizeof hb, "0x%" PRIx32, 1u << b);
                    if (more)
                        pj_put(p, ",", 1);
                    more = true;
                    pj_string(p, hb, (size_t)k);
                }
            pj_put(p, "]", 1);
        }
    }
    value_end(p, own);
}

void mdi_blob(mdi_printer *p, const char *key, const char *label, uint32_t offset, uint32_t len)
{
    VALUE(p, key, label, talloc_asprintf(p->blk, "blob@0x%" PRIx32 "[%" PRIu32 "]", offset, len),
          false,
          (pj_raw(p, "{\"offset\":"), pj_int(p, offset), pj_raw(p, ",\"length\":"), pj_int(p, len),
           pj_put(p, "}", 1)));
}

void mdi_range(mdi_printer *p, const char *key, const char *label, uint32_t first, uint32_t end)
{
    VALUE(p, key, label, talloc_asprintf(p->blk, "0x%08" PRIx32 "..0x%08" PRIx32, first, end),
          false,
          (pj_raw(p, "{\"first\":"), pj_token(p, first), pj_raw(p, ",\"end\":"), pj_token(p, end),
           pj_put(p, "}", 1)));
}

void mdi_note(mdi_printer *p, const char *key, const char *fmt, ...)
{
    va_list ap;
    char *s;
    if (p->failed)
        return;
    va_start(ap, fmt);
    s = talloc_vasprintf(p->blk ? p->blk : (void *)p, fmt, ap);
    va_end(ap);
    if (!s) {
        p->failed = true;
        return;
    }
    if (pr_text(p)) {
        char **slot = NULL;
        if (p->last == LAST_LINE && p->last_line < p->nlines) {
            slot = &p->lines[p->last_line].value;
        } else if (p->last == LAST_CELL) {
            struct table *t = pt_item_table(p);
            if (t && p->last_row < t->nrows && p->last_cell < t->rowlen[p->last_row])
                slot = &t->rows[p->last_row][p->last_cell];
        }
        if (slot) {
            char *e = mdi_escape(p->blk, s, strlen(s), false);
            *slot = e ? talloc_asprintf(p->blk, "%s (%s)", *slot, e) : NULL;
            if (!*slot)
                p->failed = true;
        }
    } else if (key && p->last_obj) {
        /* a member after the value's, in the same object (still open:
         * a note comes right after its value) */
        struct frame *f = pj_container(p);
        if (f && f->jopen && !f->jarray && f->jid == p->last_obj && pj_member(p, key))
            pj_str0(p, s);
    }
    talloc_free(s);
}

void mdi_textf(mdi_printer *p, const char *label, const char *fmt, ...)
{
    va_list ap;
    if (!pr_text(p) || p->failed)
        return;
    if (!p->depth) {
        /* A line of its own at top level. */
        char *s;
        pr_block_begin(p);
        va_start(ap, fmt);
        s = talloc_vasprintf(p->blk, fmt, ap);
        va_end(ap);
        if (s) {
            struct line *l = pt_add_line(p, L_TEXT, 0);
            if (l)
                l->value = s;
        } else {
            p->failed = true;
        }
        pr_block_end(p);
        return;
    }
    if (label && pr_text_on(p)) {
        char *s;
        va_start(ap, fmt);
        s = pt_arena_vprintf(p, fmt, ap);
        va_end(ap);
        pt_text_put(p, label, s, false);
    }
}

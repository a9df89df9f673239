/* mdinspect's printer, JSON Lines: each top-level record or item is
 * streamed into a buffer as its values come (an object or array opened
 * and closed with its frame, commas and keys as members are added) and
 * written with one fwrite when it ends; strings and numbers are written by
 * common/json.h, the same code as batch --json's. */
#include "config.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include "common/json.h"
#include "print_int.h"

/* The record being built grows in p->jb; it is written with one fwrite
 * when its top-level record or item ends, or not at all after an error.
 * Room for n more bytes; false (and the printer failed) without it. */
static bool reserve(mdi_printer *p, size_t n)
{
    size_t cap;
    char *nb;
    if (p->failed)
        return false;
    if (n <= p->jcap - p->jlen)
        return true;
    if (n > SIZE_MAX / 4 - p->jlen) {
        p->failed = true;
        return false;
    }
    for (cap = p->jcap ? p->jcap : 4096; n > cap - p->jlen;)
        cap *= 2;
    if (!(nb = talloc_realloc(p, p->jb, char, cap))) {
        p->failed = true;
        return false;
    }
    p->jb = nb;
    p->jcap = cap;
    return true;
}

void pj_put(mdi_printer *p, const void *s, size_t n)
{
    if (!n || !reserve(p, n)) /* n 0: the buffer may not exist yet */
        return;
    memcpy(p->jb + p->jlen, s, n);
    p->jlen += n;
}

void pj_raw(mdi_printer *p, const char *s)
{
    pj_put(p, s, strlen(s));
}

/* A JSON string: room for the worst case, then common/json.h's escaping
 * straight into the buffer. */
void pj_string(mdi_printer *p, const char *s, size_t n)
{
    size_t used;
    if (n > SIZE_MAX / 8 || !reserve(p, n * MDI_JSON_ESCAPE_MAX + 2)) {
        p->failed = true;
        return;
    }
    p->jb[p->jlen++] = '"';
    p->jlen += mdi_json_escape(p->jb + p->jlen, p->jcap - p->jlen, s, n, &used);
    p->jb[p->jlen++] = '"';
}

void pj_str0(mdi_printer *p, const char *s)
{
    if (s)
        pj_string(p, s, strlen(s));
    else
        pj_raw(p, "null");
}

/* Integers past INT64_MAX as the string "0x...", as they were printed
 * with jansson (whose integers are signed). */
void pj_uint(mdi_printer *p, uint64_t v)
{
    char b[MDI_JSON_NUMBER_MAX];
    if (v > (uint64_t)INT64_MAX) {
        int n = snprintf(b, sizeof b, "0x%" PRIx64, v);
        pj_string(p, b, (size_t)n);
        return;
    }
    pj_put(p, b, mdi_json_uint(b, v));
}

void pj_int(mdi_printer *p, int64_t v)
{
    char b[MDI_JSON_NUMBER_MAX];
    pj_put(p, b, mdi_json_int(b, v));
}

void pj_token(mdi_printer *p, uint32_t token)
{
    char b[12];
    b[0] = '"';
    mdi_json_token(b + 1, token);
    b[11] = '"';
    pj_put(p, b, sizeof b);
}

/* A real; NaN and infinities as mdi_real() says. */
void pj_real(mdi_printer *p, double v)
{
    char b[MDI_JSON_NUMBER_MAX];
    if (isnan(v))
        pj_raw(p, "\"NaN\"");
    else if (isinf(v))
        pj_raw(p, v < 0 ? "\"-Infinity\"" : "\"Infinity\"");
    else
        pj_put(p, b, mdi_json_real(b, v));
}

/* A value that could not be read: {"error": msg}. */
void pj_error(mdi_printer *p, const char *msg)
{
    pj_raw(p, "{\"error\":");
    pj_str0(p, msg);
    pj_put(p, "}", 1);
}

/* The container values go into: a scalar item's is its list's array. */
struct frame *pj_container(mdi_printer *p)
{
    struct frame *f = pr_top(p);
    if (f && f->jshare && p->depth >= 2)
        f = &p->st[p->depth - 2];
    return f;
}

/* Start a member of the innermost container: the comma, and in an object
 * the key (NULL: "value"). False when the container is not written (no
 * JSON for it): then the value is not either. */
bool pj_member(mdi_printer *p, const char *key)
{
    struct frame *f = pj_container(p);
    if (!f || !f->jopen || p->failed)
        return false;
    if (f->jmore)
        pj_put(p, ",", 1);
    f->jmore = true;
    if (f->jarray) {
        p->last_obj = 0;
        return true;
    }
    key = key ? key : "value";
    pj_string(p, key, strlen(key));
    pj_put(p, ":", 1);
    p->last_obj = f->jid;
    return !p->failed;
}

static void mark_open(mdi_printer *p, struct frame *f, bool array)
{
    pj_put(p, array ? "[" : "{", 1);
    f->jopen = true;
    f->jarray = array;
    f->jmore = false;
    f->jid = ++p->jids ? p->jids : ++p->jids; /* never 0: "none" */
}

/* The frame on top opens its object or array as a member of its parent. */
void pj_nest(mdi_printer *p, const char *key, bool array)
{
    struct frame *f = pr_top(p);
    bool ok;
    p->depth--;
    ok = pj_member(p, key);
    p->depth++;
    if (ok)
        mark_open(p, f, array);
}

void pj_close(mdi_printer *p, struct frame *f)
{
    if (f->jopen)
        pj_put(p, f->jarray ? "]" : "}", 1);
    f->jopen = false;
}

/* A top-level record or item: a fresh line, "file" first. */
void pj_record_open(mdi_printer *p, struct frame *f)
{
    p->jlen = 0;
    p->jroot = true;
    mark_open(p, f, false);
    if (p->file) {
        pj_raw(p, "\"file\":");
        pj_string(p, p->file, strlen(p->file));
        f->jmore = true;
    }
}

void pj_record_close(mdi_printer *p)
{
    if (!p->jroot)
        return;
    p->jroot = false;
    pj_put(p, "}\n", 2);
    if (!p->failed && fwrite(p->jb, 1, p->jlen, p->out) != p->jlen)
        p->failed = true;
    p->jlen = 0;
}

/* `find`: types and members by name across every open module: TypeDef
 * names (ECMA-335 II.22.37) and the names of Field, MethodDef, Property
 * and Event rows (II.22.15, II.22.26, II.22.34, II.22.13), matched against
 * a glob. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/members.h>
#include <mdtools/nesting.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "cmd.h"
#include "index.h"

struct hit_ctx {
    mdi_state *st;
    mdi_module *m;
    const char *member_glob;
    long hits, bad;
};

static const char *member_kind(uint32_t tok)
{
    switch (MDT_TOKEN_TABLE(tok)) {
    case MDT_TABLE_Field: return "field";
    case MDT_TABLE_MethodDef: return "method";
    case MDT_TABLE_Property: return "property";
    default: return "event";
    }
}

/* One match. Text shows the signature after the name, in the last column
 * (overloads differ there; a last column needs no padding); JSON has both
 * fields apart. */
/* A member's name from its owner's: `Owner::name` as the formatter writes
 * it (doc/names.md), the owner's name cached; NULL when it does not fit. */
static const char *member_name(struct hit_ctx *h, char *buf, size_t size, uint32_t owner,
                               const char *name, size_t len)
{
    char obuf[512];
    const char *on = mdi_name_buf(h->st, NULL, obuf, sizeof obuf, h->m->img, owner);
    size_t ol;
    if (!on || on != obuf || (ol = strlen(on)) + 2 + len + 1 > size) {
        if (on && on != obuf)
            talloc_free((char *)on);
        mdt_error_clear();
        return NULL;
    }
    memcpy(buf, on, ol);
    memcpy(buf + ol, "::", 2);
    memcpy(buf + ol + 2, name, len);
    buf[ol + 2 + len] = '\0';
    return buf;
}

/* `owner`: the member's TypeDef when the caller knows it (0: ask the
 * library), with `mname` its own name. */
static void hit(struct hit_ctx *h, uint32_t tok, const char *kind, uint32_t owner,
                const char *mname, size_t mlen)
{
    mdi_printer *p = h->st->out;
    char buf[512], sbuf[512], msg[400];
    const char *sig = NULL;
    const char *name = owner ? member_name(h, buf, sizeof buf, owner, mname, mlen) : NULL;
    if (!name)
        name = mdi_name_buf(h->st, p, buf, sizeof buf, h->m->img, tok);
    bool has_sig =
        MDT_TOKEN_TABLE(tok) != MDT_TABLE_TypeDef && MDT_TOKEN_TABLE(tok) != MDT_TABLE_Event;
    h->hits++;
    mdi_item_begin(p);
    mdi_str(p, "module", "module", h->m->name);
    mdi_token(p, "token", "token", tok);
    mdi_str(p, "kind", "kind", kind);
    if (!name) {
        mdi_error(p, "name", "name", mdi_cell_error(msg, sizeof msg));
        h->bad++;
        mdt_error_clear();
        mdi_item_end(p);
        return;
    }
    if (has_sig && !(sig = mdi_sig_buf(h->st, p, sbuf, sizeof sbuf, h->m->img, tok))) {
        mdi_cell_error(msg, sizeof msg);
        h->bad++;
    }
    mdi_str(p, "name", NULL, name);
    mdi_metadata_name(h->st, NULL, h->m->img, tok);
    if (!has_sig)
        mdi_none(p, "signature", NULL, NULL);
    else if (sig)
        mdi_str(p, "signature", NULL, sig);
    else
        mdi_error(p, "signature", NULL, msg);
    if (mdi_printer_format(p) == MDI_FMT_TEXT) {
        /* Escaped as any value: names come from the image. */
        char small[1024], *both = NULL;
        const char *tail = sig ? sig : has_sig ? "<error>" : NULL;
        size_t nl = strlen(name), tl = tail ? strlen(tail) : 0;
        if (tail && nl + tl + 2 <= sizeof small)
            both = small;
        else if (tail)
            both = talloc_size(p, nl + tl + 2);
        if (both) {
            memcpy(both, name, nl);
            both[nl] = ' ';
            memcpy(both + nl + 1, tail, tl + 1);
        }
        mdi_str(p, NULL, "name", both ? both : name);
        if (both != small)
            talloc_free(both);
    }
    if (name != buf)
        talloc_free((char *)name);
    if (sig != sbuf)
        talloc_free((char *)sig);
    mdt_error_clear();
    mdi_item_end(p);
}

/* The members of `type` whose own name matches the member glob. */
static void type_members(struct hit_ctx *h, uint32_t type)
{
    mdt_members it = MDT_MEMBERS_INIT;
    uint32_t tok;
    const char *name;
    int e;
    if (mdt_members_init(&it, h->m->img, type, MDT_MEMBERS_ALL)) {
        mdt_error_clear();
        h->bad++;
        return;
    }
    while (!mdi_interrupted(h->st) && (e = mdt_members_next(&tok, &name, &it)) != MDT_ITEROVER) {
        if (e)
            h->bad++;
        else if (strlen(name) < 1024 && mdi_glob(h->member_glob, name))
            hit(h, tok, member_kind(tok), 0, NULL, 0);
    }
    mdt_error_clear();
}

/* Members of every type whose name matches: one pass per member table. */
static void members_by_name(struct hit_ctx *h, const char *glob)
{
    static const struct {
        uint8_t table, col;
    } tabs[] = {
        {MDT_TABLE_Field, MDT_COL_Field_Name},
        {MDT_TABLE_MethodDef, MDT_COL_MethodDef_Name},
        {MDT_TABLE_Property, MDT_COL_Property_Name},
        {MDT_TABLE_Event, MDT_COL_Event_Name},
    };
    const mdt_image *img = h->m->img;
    for (size_t k = 0; k < sizeof tabs / sizeof tabs[0]; k++) {
        uint32_t n = mdt_table_rows(img, tabs[k].table);
        for (uint32_t rid = 1; rid <= n && !mdi_interrupted(h->st); rid++) {
            mdt_row r;
            const char *s;
            size_t len;
            if (mdt_row_get(&r, img, tabs[k].table, rid) ||
                mdt_row_string(&s, &len, &r, tabs[k].col)) {
                mdt_error_clear();
                h->bad++;
                if (mdt_row_get(&r, img, tabs[k].table, rid))
                    break; /* the rest of the table is missing */
                continue;
            }
            if (mdi_glob(glob, s)) {
                uint32_t tok = MDT_TOKEN(tabs[k].table, rid), owner;
                if (mdt_member_owner(&owner, img, tok))
                    owner = 0; /* the library names it whole */
                mdt_error_clear();
                hit(h, tok, member_kind(tok), owner, s, len);
            }
        }
    }
}

static int run(mdi_state *st, size_t argc, const mdi_arg *argv)
{
    const char *pattern = argv[0].text, *sep = strstr(pattern, "::");
    mdi_printer *p = st->out;
    char *type_glob = sep ? talloc_strndup(st, pattern, (size_t)(sep - pattern)) : NULL;
    long hits = 0, bad = 0;
    char caption[300];

    if (!st->nmods)
        return mdi_fail(st, "no module is open (use 'open PATH')");
    if (sep && (!type_glob || !type_glob[0] || !sep[2])) {
        talloc_free(type_glob);
        return mdi_fail(st, "'%s': a type and a member go on both sides of '::'", pattern);
    }
    snprintf(caption, sizeof caption, "matches of %s in %zu module%s", pattern, st->nmods,
             st->nmods == 1 ? "" : "s");
    mdi_list_begin(p, NULL, caption, "none", 0);
    for (size_t i = 0; i < st->nmods && !mdi_interrupted(st); i++) {
        mdi_module *m = st->mods[i];
        const mdi_index *ix = mdi_index_of(m);
        struct hit_ctx h = {st, m, sep ? sep + 2 : NULL, 0, 0};
        if (!ix) {
            bad++;
            continue;
        }
        mdi_about(st, m);
        for (size_t k = 0; k < ix->ntypes && !mdi_interrupted(st); k++) {
            const mdi_typeent *t = &ix->types[k];
            if (!mdi_type_matches(t, sep ? type_glob : pattern))
                continue;
            if (sep)
                type_members(&h, t->token);
            else
                hit(&h, t->token, mdi_kind_name(m->img, t->token), 0, NULL, 0);
        }
        if (!sep)
            members_by_name(&h, pattern);
        hits += h.hits;
        bad += h.bad + (long)ix->nbad;
    }
    mdi_list_end(p);
    mdi_about(st, mdi_current(st));
    talloc_free(type_glob);
    if (bad)
        return mdi_fail(st, "%ld name%s could not be read", bad, bad == 1 ? "" : "s");
    return MDI_OK;
}

const mdi_cmd mdi_cmd_find = {
    .name = "find",
    .args = {{.name = "PATTERN", .kind = MDI_ARG_PATTERN}},
    .summary = "types and members by name, in every open module",
    .help = "Finds, in every open module, the types PATTERN matches (as `types`\n"
            "matches a GLOB: `*Attribute`, `System.IO.*`, `List`) and the fields,\n"
            "methods, properties and events whose own name it matches\n"
            "(`Concat`, `get_*`). `Type::member` looks for members of the types\n"
            "matching Type only (`System.String::Concat`, `*::Dispose`). A pattern\n"
            "is a glob (* ? [...]); case is ignored when it has no upper-case\n"
            "letter. Each match shows the module, token, kind and name, and for a\n"
            "method, field or property its signature after the name (overloads\n"
            "differ there).\n",
    .run = run,
};

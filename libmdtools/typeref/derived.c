/* The types that extend or implement a type across a module view
 * (mdt_derived_types, <mdtools/typeref.h>): every TypeDef's Extends
 * (ECMA-335 II.22.37) and InterfaceImpl rows (II.22.23) of every module
 * with metadata, each named type taken to the TypeDef it stands for: a
 * TypeDef as it is, a TypeRef through the resolver (forwarders and all,
 * mdt_typeref_resolve), a TypeSpec of a generic instantiation through its
 * generic type (`Box<int>` extends `Box<T>`'s definition). Other TypeSpecs
 * (arrays, pointers, parameters) and references that do not resolve name
 * no TypeDef and are left out. The edges are sorted by the type they point
 * to; the direct answer is one range of them, the transitive closure a
 * breadth-first walk over them with a set of the types seen, so a cycle
 * (damaged metadata: a type extending itself through others) ends where it
 * closes. A row that does not read is skipped: the walk answers about the
 * rows that do. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/image.h>
#include <mdtools/modset.h>
#include <mdtools/sig.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>
#include <mdtools/typeref.h>

#include "util/error.h"

struct edge {
    uintptr_t to_mod, from_mod;
    uint32_t to_tok, from_tok;
    uint32_t via; /* the row naming the target: TypeDef (Extends) or InterfaceImpl */
    uint32_t seq; /* insertion order: the sort keeps row order per target */
};

struct walk {
    void *mem;
    const mdt_modview *view;
    struct edge *edges;
    size_t n, cap;
};

static int by_target(const void *a, const void *b)
{
    const struct edge *x = a, *y = b;
    if (x->to_mod != y->to_mod)
        return x->to_mod < y->to_mod ? -1 : 1;
    if (x->to_tok != y->to_tok)
        return x->to_tok < y->to_tok ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The TypeDef a TypeDefOrRef token of module `mod` stands for: *to_mod
 * 0 when none (a reference that does not resolve, a TypeSpec that is no
 * generic instantiation, damage). */
static int target_of(struct walk *w, uintptr_t mod, const mdt_image *img, uint32_t tok,
                     uintptr_t *to_mod, uint32_t *to_tok)
{
    *to_mod = 0;
    *to_tok = 0;
    if (!MDT_TOKEN_RID(tok))
        return 0;
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeSpec) {
        uint64_t arena[128];
        mdt_sig sig;
        if (mdt_sig_of_token_buf(arena, sizeof arena, &sig, img, tok) || !sig.type ||
            sig.type->kind != MDT_ELEMENT_TYPE_GENERICINST || !sig.type->elem)
            return 0; /* the caller forgets the failure: no TypeDef */
        tok = sig.type->elem->token;
        if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeSpec)
            return 0;
    }
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeDef) {
        *to_mod = mod;
        *to_tok = tok;
        return 0;
    }
    if (MDT_TOKEN_TABLE(tok) == MDT_TABLE_TypeRef) {
        mdt_resolution r;
        int e = mdt_typeref_resolve(NULL, &r, NULL, w->view, mod, tok, NULL);
        if (e == MDT_ENOMEM)
            return e;
        if (e == 0 && r.resolved) {
            *to_mod = r.module;
            *to_tok = r.token;
        }
    }
    return 0;
}

static int add_edge(struct walk *w, uintptr_t from_mod, uint32_t from_tok, uint32_t via,
                    uintptr_t to_mod, uint32_t to_tok)
{
    if (!to_mod)
        return 0;
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 256;
        struct edge *ne = talloc_realloc(w->mem, w->edges, struct edge, cap);
        if (!ne)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory listing derived types");
        w->edges = ne;
        w->cap = cap;
    }
    w->edges[w->n] = (struct edge){to_mod, from_mod, to_tok, from_tok, via, (uint32_t)w->n};
    w->n++;
    return 0;
}

/* Every edge of one module. */
static int module_edges(struct walk *w, uintptr_t mod, const mdt_image *img)
{
    uint32_t ntd = mdt_table_rows(img, MDT_TABLE_TypeDef);
    uint32_t nii = mdt_table_rows(img, MDT_TABLE_InterfaceImpl);
    uintptr_t to_mod;
    uint32_t to_tok;
    int e;
    for (uint32_t rid = 1; rid <= ntd; rid++) {
        mdt_row r;
        uint32_t base;
        uint64_t m = mdt__err_mark();
        if (mdt_row_get(&r, img, MDT_TABLE_TypeDef, rid) ||
            mdt_row_token(&base, &r, MDT_COL_TypeDef_Extends)) {
            mdt__err_forget(m);
            continue;
        }
        if ((e = target_of(w, mod, img, base, &to_mod, &to_tok)))
            return e;
        mdt__err_forget(m);
        if ((e = add_edge(w, mod, MDT_TOKEN(MDT_TABLE_TypeDef, rid),
                          MDT_TOKEN(MDT_TABLE_TypeDef, rid), to_mod, to_tok)))
            return e;
    }
    for (uint32_t rid = 1; rid <= nii; rid++) {
        mdt_row r;
        uint32_t cls, iface;
        uint64_t m = mdt__err_mark();
        if (mdt_row_get(&r, img, MDT_TABLE_InterfaceImpl, rid) ||
            mdt_row_token(&iface, &r, MDT_COL_InterfaceImpl_Interface)) {
            mdt__err_forget(m);
            continue;
        }
        cls = mdt_row_raw(&r, MDT_COL_InterfaceImpl_Class);
        if (!cls || cls > ntd)
            continue; /* damage: no such class */
        if ((e = target_of(w, mod, img, iface, &to_mod, &to_tok)))
            return e;
        mdt__err_forget(m);
        if ((e = add_edge(w, mod, MDT_TOKEN(MDT_TABLE_TypeDef, cls),
                          MDT_TOKEN(MDT_TABLE_InterfaceImpl, rid), to_mod, to_tok)))
            return e;
    }
    return 0;
}

/* The set of types seen: open addressing over (module, token). */
struct seen {
    uintptr_t *mod;
    uint32_t *tok;
    size_t mask;
};

static size_t slot_of(const struct seen *s, uintptr_t mod, uint32_t tok)
{
    uint64_t h = ((uint64_t)mod * 0x9E3779B97F4A7C15u) ^ ((uint64_t)tok * 0xC2B2AE3D27D4EB4Fu);
    size_t i = (size_t)(h ^ (h >> 29)) & s->mask;
    while (s->mod[i] && !(s->mod[i] == mod && s->tok[i] == tok))
        i = (i + 1) & s->mask;
    return i;
}

/* Adds (mod, tok); false when it was there. The table holds every edge's
 * source and the start at most, and has room for twice that. */
static bool seen_add(struct seen *s, uintptr_t mod, uint32_t tok)
{
    size_t i = slot_of(s, mod, tok);
    if (s->mod[i])
        return false;
    s->mod[i] = mod;
    s->tok[i] = tok;
    return true;
}

/* First edge pointing at (mod, tok), by binary search. */
static size_t first_edge(const struct walk *w, uintptr_t mod, uint32_t tok)
{
    size_t lo = 0, hi = w->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const struct edge *x = &w->edges[mid];
        if (x->to_mod < mod || (x->to_mod == mod && x->to_tok < tok))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int mdt_derived_types(void *mem_ctx, mdt_derived **out, size_t *nout, const mdt_modview *view,
                      uintptr_t module, uint32_t type, unsigned flags)
{
    struct walk w = {0};
    struct seen s = {0};
    mdt_module_info info;
    mdt_derived *res = NULL;
    size_t nres = 0, size, head = 0;
    void *tmp;
    int e;
    if (!out || !nout || !view)
        return mdt__fail_simple(MDT_EINVAL, "mdt_derived_types: no view or no output");
    *out = NULL;
    *nout = 0;
    if (MDT_TOKEN_TABLE(type) != MDT_TABLE_TypeDef || !MDT_TOKEN_RID(type))
        return mdt__fail_simple(MDT_EINVAL, "mdt_derived_types: 0x%08x is no TypeDef token", type);
    if (mdt_modview_lookup(&info, view, module))
        return mdt__fail_simple(MDT_ENOTFOUND, "mdt_derived_types: no module %#jx in the view",
                                (uintmax_t)module);
    if (!info.image || MDT_TOKEN_RID(type) > mdt_table_rows(info.image, MDT_TABLE_TypeDef))
        return mdt__fail_simple(MDT_EINVAL,
                                "mdt_derived_types: module %#jx has no TypeDef "
                                "0x%08x",
                                (uintmax_t)module, type);
    if (!(tmp = talloc_new(NULL)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory listing derived types");
    w.mem = tmp;
    w.view = view;
    for (size_t i = 0, n = mdt_modview_count(view); i < n; i++) {
        mdt_module_info m;
        if (mdt_modview_module(&m, view, i) || !m.image || m.bad_image)
            continue;
        if ((e = module_edges(&w, m.id, m.image)))
            goto fail;
    }
    if (w.n > 1)
        qsort(w.edges, w.n, sizeof *w.edges, by_target);
    /* Room for every source and the start, at most half full. */
    for (size = 16; size < 2 * (w.n + 1); size *= 2)
        ;
    s.mask = size - 1;
    s.mod = talloc_zero_array(tmp, uintptr_t, size);
    s.tok = talloc_zero_array(tmp, uint32_t, size);
    res = talloc_array(tmp, mdt_derived, w.n ? w.n : 1);
    if (!s.mod || !s.tok || !res) {
        e = mdt__fail_simple(MDT_ENOMEM, "out of memory listing derived types");
        goto fail;
    }
    seen_add(&s, module, type);
    /* Breadth first: the direct ones, then (MDT_DERIVED_ALL) theirs. */
    for (uintptr_t pm = module, pt = type;;) {
        uint16_t depth = head ? (uint16_t)(res[head - 1].depth + 1) : 1;
        for (size_t i = first_edge(&w, pm, (uint32_t)pt);
             i < w.n && w.edges[i].to_mod == pm && w.edges[i].to_tok == pt; i++) {
            const struct edge *x = &w.edges[i];
            if (!seen_add(&s, x->from_mod, x->from_tok))
                continue; /* seen: another path, or a cycle */
            res[nres++] = (mdt_derived){
                .module = x->from_mod,
                .token = x->from_tok,
                .via = x->via,
                .parent_module = pm,
                .parent = (uint32_t)pt,
                .depth = depth,
                .interface = MDT_TOKEN_TABLE(x->via) == MDT_TABLE_InterfaceImpl,
            };
        }
        if (!(flags & MDT_DERIVED_ALL) || head == nres)
            break;
        pm = res[head].module;
        pt = res[head].token;
        head++;
    }
    *out = talloc_steal(mem_ctx, res);
    *nout = nres;
    talloc_free(tmp);
    return 0;
fail:
    talloc_free(tmp);
    return e;
}

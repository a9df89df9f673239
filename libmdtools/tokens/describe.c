/* Naming a ClassID or a FunctionID without the runtime and without
 * allocating: a pre-order tree of nodes for the generics formatter
 * (class_describe), the portable type-argument descriptor of doc/names.md
 * written straight into the caller's buffer (class_descriptor), and a
 * FunctionID with its module and owning class in one section
 * (function_describe: what a profiler needs to name a frame). The first two
 * walk the type-argument tree with an explicit stack of at most
 * IDM_MAX_DEPTH frames and visit at most IDM_MAX_NODES nodes, so a
 * handler's steps and stack use stay bounded; both run inside one reader
 * section, so every record they read stays readable, though a concurrent
 * unload may make a later node unknown. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <string.h>

#include "tokens/grace_int.h"
#include "tokens/idmap_int.h"
#include "tokens/records_int.h"
#include "util/hex.h"

/* Nesting and size limits of a described tree. */
#define IDM_MAX_DEPTH 32u
#define IDM_MAX_NODES 4096u

struct frame {
    uintptr_t id;
    uint64_t gen;
    uint32_t nargs, next;
    uint8_t shape, prim;
    uint16_t rank;
};

static void fill_node(const mdt_idmap *m, mdt_idmap_type_node *n, uintptr_t id,
                      const struct idm_crec *r)
{
    mdt_idmap_module_info mi;
    memset(n, 0, sizeof *n);
    n->class_id = id;
    if (!r) {
        n->shape = MDT_IDMAP_SHAPE_UNKNOWN;
        return;
    }
    n->gen = r->gen;
    n->shape = r->shape;
    n->prim = r->prim;
    n->rank = r->rank;
    n->nargs = r->nargs;
    n->module = r->module;
    n->token = r->token;
    if (r->module && idm_read_module(m, &mi, r->module, 0) == 0) {
        n->image = mi.image;
        memcpy(n->mvid, mi.mvid, 16);
    }
}

int mdt_idmap_class_describe(mdt_idmap_type_node *nodes, size_t cap, size_t *count,
                             const mdt_idmap *map, uintptr_t class_id, uint64_t gen)
{
    struct frame st[IDM_MAX_DEPTH];
    struct idm_crec r;
    size_t sp = 0, nn = 0;
    int rc = 0;
    if (!map || !count || (!nodes && cap))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    if (idm_read_class(map, &r, NULL, 0, class_id, gen) != 0) {
        rc = MDT_ENOTFOUND;
        goto out;
    }
    if (nn < cap)
        fill_node(map, &nodes[nn], class_id, &r);
    nn++;
    st[sp++] = (struct frame){class_id, r.gen, r.nargs, 0, r.shape, r.prim, r.rank};
    while (sp > 0) {
        struct frame *f = &st[sp - 1];
        if (f->next >= f->nargs) {
            sp--;
            continue;
        }
        if (nn >= IDM_MAX_NODES) {
            rc = MDT_EUNSUPPORTED;
            goto out;
        }
        uint32_t k = f->next++;
        uintptr_t child = 0;
        bool known = idm_class_arg(map, f->id, f->gen, k, &child) == 0 &&
                     idm_read_class(map, &r, NULL, 0, child, 0) == 0;
        bool expand = known && sp < IDM_MAX_DEPTH;
        if (nn < cap) {
            fill_node(map, &nodes[nn], child, expand ? &r : NULL);
        }
        nn++;
        if (expand && r.nargs)
            st[sp++] = (struct frame){child, r.gen, r.nargs, 0, r.shape, r.prim, r.rank};
    }
out:
    idm_leave(&map->g, tok);
    *count = nn;
    return rc;
}

/* ---- descriptor text ---------------------------------------------------- */

struct out {
    char *buf;
    size_t len, pos;
};

static void put(struct out *o, const char *s)
{
    for (; *s; s++, o->pos++)
        if (o->pos + 1 < o->len)
            o->buf[o->pos] = *s;
}

static void put_hex(struct out *o, uint64_t v, int digits)
{
    char tmp[17];
    *mdt__hex_put(tmp, v, (unsigned)digits) = '\0';
    put(o, tmp);
}

static void put_uint(struct out *o, uint32_t v)
{
    char tmp[12];
    int i = 11;
    tmp[i] = '\0';
    do {
        tmp[--i] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    put(o, tmp + i);
}

/* The MVID as mdt_heap_guid_format() prints it, without the dashes. */
static void put_mvid(struct out *o, const uint8_t g[16])
{
    put_hex(o, (uint32_t)g[0] | (uint32_t)g[1] << 8 | (uint32_t)g[2] << 16 | (uint32_t)g[3] << 24,
            8);
    put_hex(o, (uint32_t)g[4] | (uint32_t)g[5] << 8, 4);
    put_hex(o, (uint32_t)g[6] | (uint32_t)g[7] << 8, 4);
    for (int i = 8; i < 16; i++)
        put_hex(o, g[i], 2);
}

static const char *prim_name(unsigned p)
{
    switch (p) {
    case 0x01: return "VOID";
    case 0x02: return "BOOLEAN";
    case 0x03: return "CHAR";
    case 0x04: return "I1";
    case 0x05: return "U1";
    case 0x06: return "I2";
    case 0x07: return "U2";
    case 0x08: return "I4";
    case 0x09: return "U4";
    case 0x0a: return "I8";
    case 0x0b: return "U8";
    case 0x0c: return "R4";
    case 0x0d: return "R8";
    case 0x0e: return "STRING";
    case 0x16: return "TYPEDBYREF";
    case 0x18: return "I";
    case 0x19: return "U";
    case 0x1c: return "OBJECT";
    case MDT_IDMAP_PRIM_CANON: return "__Canon";
    default: return NULL;
    }
}

/* Text before a node's arguments; 0 when its subtree needs no expansion. */
static int open_node(const mdt_idmap *m, struct out *o, const struct idm_crec *r, bool *expand)
{
    const char *pn = prim_name(r->prim);
    *expand = false;
    if (pn) {
        put(o, pn);
        return 0;
    }
    if (r->shape != MDT_IDMAP_SHAPE_TYPEDEF) {
        *expand = true; /* the element comes first, the suffix on close */
        return 0;
    }
    mdt_idmap_module_info mi;
    static const uint8_t zero[16];
    if (idm_read_module(m, &mi, r->module, 0) != 0 || memcmp(mi.mvid, zero, 16) == 0)
        return MDT_ENOTFOUND;
    put_mvid(o, mi.mvid);
    put(o, ":0x");
    put_hex(o, r->token, 8);
    if (r->nargs) {
        put(o, "<");
        *expand = true;
    }
    return 0;
}

static void close_node(struct out *o, const struct frame *f)
{
    switch (f->shape) {
    case MDT_IDMAP_SHAPE_TYPEDEF: put(o, ">"); break;
    case MDT_IDMAP_SHAPE_SZARRAY: put(o, "[]"); break;
    case MDT_IDMAP_SHAPE_ARRAY:
        put(o, "[");
        put_uint(o, f->rank);
        put(o, "]");
        break;
    case MDT_IDMAP_SHAPE_PTR: put(o, "*"); break;
    case MDT_IDMAP_SHAPE_BYREF: put(o, "&"); break;
    default: break;
    }
}

int mdt_idmap_class_descriptor(char *buf, size_t len, const mdt_idmap *map, uintptr_t class_id,
                               uint64_t gen)
{
    struct frame st[IDM_MAX_DEPTH];
    struct idm_crec r;
    struct out o = {buf, len, 0};
    size_t sp = 0, visited = 1;
    bool expand;
    int rc;
    if (!map || (!buf && len))
        return MDT_EINVAL;
    unsigned tok = idm_enter(&map->g);
    rc = idm_read_class(map, &r, NULL, 0, class_id, gen);
    if (rc == 0)
        rc = open_node(map, &o, &r, &expand);
    if (rc == 0 && expand)
        st[sp++] = (struct frame){class_id, r.gen, r.nargs, 0, r.shape, r.prim, r.rank};
    while (rc == 0 && sp > 0) {
        struct frame *f = &st[sp - 1];
        if (f->next >= f->nargs) {
            close_node(&o, f);
            sp--;
            continue;
        }
        if (++visited > IDM_MAX_NODES || sp >= IDM_MAX_DEPTH) {
            rc = MDT_EUNSUPPORTED;
            break;
        }
        uint32_t k = f->next++;
        uintptr_t child;
        if (k > 0)
            put(&o, ",");
        rc = idm_class_arg(map, f->id, f->gen, k, &child);
        if (rc == 0)
            rc = idm_read_class(map, &r, NULL, 0, child, 0);
        if (rc == 0)
            rc = open_node(map, &o, &r, &expand);
        if (rc == 0 && expand)
            st[sp++] = (struct frame){child, r.gen, r.nargs, 0, r.shape, r.prim, r.rank};
    }
    idm_leave(&map->g, tok);
    if (len)
        buf[o.pos < len ? o.pos : len - 1] = '\0';
    if (rc)
        return rc;
    return o.pos > INT32_MAX ? INT32_MAX : (int)o.pos;
}

/* ---- a FunctionID with its module and owning class ------------------- */

int mdt_idmap_function_describe(mdt_idmap_function_desc *out, uintptr_t *args_buf,
                                uint32_t args_cap, const mdt_idmap *map, uintptr_t function_id,
                                uint64_t gen)
{
    struct idm_crec f, c;
    mdt_idmap_module_info mi;
    if (!out || !map || (!args_buf && args_cap))
        return MDT_EINVAL;
    memset(out, 0, sizeof *out);
    out->class_shape = MDT_IDMAP_SHAPE_UNKNOWN;
    out->args = args_buf;
    /* one section: the module and class records read are those the
     * function named while it was read, none freed under us */
    unsigned tok = idm_enter(&map->g);
    int rc = idm_read_func(map, &f, args_buf, args_cap, function_id, gen);
    if (rc == 0) {
        uint32_t used = f.nargs < args_cap ? f.nargs : args_cap;
        out->gen = f.gen;
        out->token = f.token;
        out->nargs = f.nargs;
        out->module = f.module;
        out->class_id = f.cls;
        out->class_args = args_buf ? args_buf + used : NULL;
        if (f.module && idm_read_module(map, &mi, f.module, 0) == 0) {
            out->module_gen = mi.gen;
            out->image = mi.image;
            memcpy(out->mvid, mi.mvid, 16);
        }
        if (f.cls && idm_read_class(map, &c, args_buf ? args_buf + used : NULL, args_cap - used,
                                    f.cls, 0) == 0) {
            out->class_gen = c.gen;
            out->class_token = c.token;
            out->class_shape = c.shape;
            out->class_nargs = c.nargs;
        }
        /* The function still live, of the same generation, after the
         * reads: then the module and class answered are those it named.
         * An unload of either kills it in the same writer call, and a
         * reload comes only in a later one; a generation never comes
         * back. A module or class seen gone in between is left unknown. */
        if (idm_read_func(map, &c, NULL, 0, function_id, f.gen) != 0)
            rc = MDT_ENOTFOUND;
    }
    idm_leave(&map->g, tok);
    return rc;
}

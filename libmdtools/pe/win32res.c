/* The Win32 resource tree (PE/COFF "The .rsrc Section"; data directory 2):
 * three levels of directories, type, name and language, each entry named
 * by a number or by a UTF-16 string, the leaves data entries (RVA, size,
 * code page). The walk is bounded: three levels and no more (an entry
 * that points back at a directory above it is a subdirectory at the third
 * level, refused), every directory's entries inside the tree, at most
 * MDT_WIN32RES_MAX leaves and WALK_MAX entries visited in all (a tree whose
 * directories share their children would otherwise multiply). */
#include "config.h"

#include <string.h>
#include <talloc.h>

#include "pe/pe_int.h"
#include "util/error.h"
#include "util/utf16.h"

#define DIR_RESOURCE 2
#define WALK_MAX (16 * MDT_WIN32RES_MAX)

struct walk {
    void *mem;
    rd tree;
    mdt_win32res *out;
    size_t n, cap, visited;
    mdt_win32res cur;
};

/* A name at `off` in the tree: u16 length, then that many UTF-16 units. */
static int name_at(struct walk *w, uint32_t off, const char **name)
{
    rd r = w->tree;
    uint16_t len;
    const uint8_t *p;
    int e;
    if ((e = rd_seek(&r, off, "resource name")) || (e = rd_u16(&r, &len, "resource name")) ||
        (e = rd_bytes(&r, &p, (size_t)len * 2, "resource name")))
        return e;
    if (!(*name = mdt__utf16_to_utf8(w->mem, p, len)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    return 0;
}

static int leaf(struct walk *w, uint32_t off)
{
    rd r = w->tree;
    int e;
    if ((e = rd_seek(&r, off, "resource data entry")) ||
        (e = rd_need(&r, 16, "resource data entry")))
        return e;
    if (w->n == MDT_WIN32RES_MAX)
        return rd_fail(&r, MDT_EBADIMAGE, "more than %d resources", MDT_WIN32RES_MAX);
    if (w->n == w->cap) {
        size_t cap = w->cap ? w->cap * 2 : 16;
        mdt_win32res *a = talloc_realloc(w->mem, w->out, mdt_win32res, cap);
        if (!a)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        w->out = a;
        w->cap = cap;
    }
    mdt_win32res *x = &w->out[w->n++];
    *x = w->cur;
    rd_u32(&r, &x->data_rva, "data RVA");
    rd_u32(&r, &x->size, "data size");
    rd_u32(&r, &x->codepage, "code page");
    return 0;
}

static int directory(struct walk *w, uint32_t off, int level)
{
    static const char *const what[] = {"type directory", "name directory", "language directory"};
    rd r = w->tree;
    const uint8_t *h;
    uint32_t count;
    int e;
    r.region = what[level];
    if ((e = rd_seek(&r, off, what[level])) || (e = rd_bytes(&r, &h, 16, what[level])))
        return e;
    count = (uint32_t)le16(h + 12) + le16(h + 14);
    if ((e = rd_need(&r, (size_t)count * 8, "directory entries")))
        return e;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t id = le32(r.base + r.pos), to = le32(r.base + r.pos + 4);
        const char *name = NULL;
        if (++w->visited > WALK_MAX)
            return rd_fail(&r, MDT_EBADIMAGE, "more than %d resource directory entries", WALK_MAX);
        if (id & 0x80000000u) {
            if ((e = name_at(w, id & 0x7FFFFFFFu, &name)))
                return e;
            id = 0;
        }
        if (level == 0) {
            w->cur.type_id = id;
            w->cur.type_name = name;
        } else if (level == 1) {
            w->cur.name_id = id;
            w->cur.name = name;
        } else {
            w->cur.language = id;
        }
        bool sub = (to & 0x80000000u) != 0;
        if (sub != (level < 2))
            return rd_fail(&r, MDT_EBADIMAGE, "%s entry %u: a %s where the tree has %s",
                           what[level], i + 1, sub ? "subdirectory" : "data entry",
                           level < 2 ? "subdirectories" : "data entries");
        e = sub ? directory(w, to & 0x7FFFFFFFu, level + 1) : leaf(w, to);
        if (e)
            return e;
        r.pos += 8;
    }
    return 0;
}

int mdt_win32res_list(void *mem_ctx, mdt_win32res **out, size_t *n, const mdt_image *img)
{
    mdt_pe_headers hd;
    struct walk w;
    void *tmp;
    int e;
    if (!out || !n || !img)
        return mdt__fail_simple(MDT_EINVAL, "mdt_win32res_list: NULL argument");
    *out = NULL;
    *n = 0;
    if ((e = mdt_pe_headers_read(&hd, img)))
        return e;
    if (hd.ndirs <= DIR_RESOURCE || !hd.dirs[DIR_RESOURCE].rva || !hd.dirs[DIR_RESOURCE].size)
        return 0;
    if (!(tmp = talloc_new(NULL)))
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    memset(&w, 0, sizeof w);
    w.mem = tmp;
    if ((e = mdt__pe_rva_reader(&w.tree, img, hd.dirs[DIR_RESOURCE].rva, hd.dirs[DIR_RESOURCE].size,
                                "resource directory")) ||
        (e = directory(&w, 0, 0))) {
        talloc_free(tmp);
        return e;
    }
    if (w.n) {
        /* The array to the caller, and the names (under tmp) under it. */
        *out = talloc_steal(mem_ctx, w.out);
        *n = w.n;
        talloc_steal(w.out, tmp);
    } else {
        talloc_free(tmp);
    }
    return 0;
}

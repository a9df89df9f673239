/* Native frames as an ELF object and an offset (doc/profile-log.md,
 * Frames): `native:NAME:BUILDID+0xOFF`, the object's file name, its GNU
 * build-id and the address in the object's own virtual addresses (the
 * sampled address less the load bias: what nm, addr2line and the symbol
 * tables use), plus one `#elf NAME:BUILDID PATH` line per object in the
 * log, so that mdinspect batch can find the file and name the offset.
 *
 * Everything comes from what the dynamic loader mapped, never from a file:
 * dl_iterate_phdr lists the loaded objects with their program headers; an
 * object's executable PT_LOAD segments go into a table sorted by address,
 * and its build-id is read from its PT_NOTE segments in memory (only where
 * a readable PT_LOAD of the same object covers the note, with every note's
 * sizes checked against the segment). The vDSO is `[vdso]` (no file), the
 * main program the file /proc/self/exe names. Runs on the drain thread
 * (drain_lock held): dl_iterate_phdr takes the loader's lock, so never in
 * the signal handler.
 *
 * The table is rebuilt only when the loader's list changed: dl_iterate_phdr
 * counts objects added and removed (dlpi_adds, dlpi_subs), read once per
 * drain pass (mdp_elf_pass), one callback that stops at the first object.
 * Objects stay known to the end of the log (their #elf line may be owed)
 * even after a dlclose; at most MAX_OBJS distinct ones, after which new
 * ones are plain `native`. */
#define _GNU_SOURCE
#include "config.h"

#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include "core/base.h"
#include "core/hex.h"
#include "core/native.h"

#define MAX_OBJS 4096u
#define MAX_SEGS_PER_OBJ 16u
#define MAX_BUILDID 64u /* bytes; a longer note is no build-id we print */

struct elf_obj {
    char *path;   /* as the loader names it; NULL: no file (the vDSO) */
    char *prefix; /* "native:" KEY "+0x", KEY = NAME ":" BUILDID */
    size_t prefix_len;
    uintptr_t bias; /* dlpi_addr */
    int used, announced;
    int announcing; /* in the write being made (mdp_elf_announced settles it) */
};

struct elf_seg {
    uintptr_t lo, hi;
    struct elf_obj *obj;
};

struct mdp_elfmap {
    struct elf_obj **objs; /* every object seen, in order */
    size_t nobjs, cap;
    struct elf_seg *segs; /* executable segments of the loaded objects, sorted */
    size_t nsegs;
    unsigned long long adds, subs;
    int built, check;
    char exe[4096]; /* the main program's path ("" unknown) */
};

/* ---- the loader's counters -------------------------------------------- */

struct counts {
    unsigned long long adds, subs;
    int have;
};

static int first_only(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct counts *c = arg;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        c->adds = info->dlpi_adds;
        c->subs = info->dlpi_subs;
        c->have = 1;
    }
    return 1; /* stop */
}

/* ---- one object ----------------------------------------------------------- */

/* Whether [a, a + n) lies inside a readable PT_LOAD segment of the object. */
static int readable(const struct dl_phdr_info *info, uintptr_t a, size_t n)
{
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD || !(p->p_flags & PF_R))
            continue;
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        if (a >= lo && n <= p->p_memsz && a - lo <= p->p_memsz - n)
            return 1;
    }
    return 0;
}

/* The GNU build-id from the object's notes in memory, as lower-case hex
 * into out (2 * MAX_BUILDID + 1 bytes); "" when there is none. */
static void build_id(const struct dl_phdr_info *info, char *out)
{
    out[0] = 0;
    for (size_t i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        uintptr_t at = info->dlpi_addr + p->p_vaddr;
        size_t left = p->p_memsz;
        if (p->p_type != PT_NOTE || left < 12 || !readable(info, at, left) || (at & 3))
            continue;
        /* notes: namesz, descsz, type (4 bytes each), name, desc, each padded to 4 */
        while (left >= 12) {
            const uint32_t *h = (const uint32_t *)at;
            size_t namesz = h[0], descsz = h[1], name_pad = (namesz + 3) & ~(size_t)3,
                   desc_pad = (descsz + 3) & ~(size_t)3;
            if (namesz > left - 12 || name_pad > left - 12 || descsz > left - 12 - name_pad ||
                desc_pad > left - 12 - name_pad)
                break;
            const unsigned char *name = (const unsigned char *)(at + 12);
            const unsigned char *desc = name + name_pad;
            if (h[2] == NT_GNU_BUILD_ID && namesz == 4 && memcmp(name, "GNU", 4) == 0 &&
                descsz > 0 && descsz <= MAX_BUILDID) {
                for (size_t k = 0; k < descsz; k++)
                    mdp_hex_put(out + 2 * k, desc[k], 2);
                out[2 * descsz] = 0;
                return;
            }
            at += 12 + name_pad + desc_pad;
            left -= 12 + name_pad + desc_pad;
        }
    }
}

/* NAME in a frame: the file name with the bytes that would break the
 * frame (space, controls, ':', '!', '%', DEL) written %XX. */
static size_t escape_name(char *out, const char *s)
{
    size_t o = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c <= 0x20 || *c == 0x7f || *c == '%' || *c == ':' || *c == '!') {
            if (out) {
                out[o] = '%';
                mdp_hex_put_as(out + o + 1, *c, 2, MDP_HEX_UPPER);
            }
            o += 3;
        } else {
            if (out)
                out[o] = (char)*c;
            o++;
        }
    }
    return o;
}

static struct elf_obj *find_or_add(struct mdp_elfmap *m, const char *path, const char *name,
                                   uintptr_t bias, const char *id)
{
    for (size_t i = m->nobjs; i-- > 0;) {
        struct elf_obj *o = m->objs[i];
        if (o->bias == bias &&
            ((!o->path && !path) || (o->path && path && !strcmp(o->path, path))) &&
            strstr(o->prefix, id))
            return o;
    }
    if (m->nobjs == MAX_OBJS)
        return NULL;
    if (m->nobjs == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 64;
        struct elf_obj **v = realloc(m->objs, cap * sizeof *v);
        if (!v)
            return NULL;
        m->objs = v;
        m->cap = cap;
    }
    struct elf_obj *o = calloc(1, sizeof *o);
    size_t n = 7 + escape_name(NULL, name) + 1 + strlen(id) + 3;
    if (!o || !(o->prefix = malloc(n + 1)) || (path && !(o->path = strdup(path)))) {
        if (o)
            free(o->prefix);
        free(o);
        return NULL;
    }
    memcpy(o->prefix, "native:", 7);
    size_t k = 7 + escape_name(o->prefix + 7, name);
    o->prefix[k++] = ':';
    k += (size_t)(stpcpy(o->prefix + k, id) - (o->prefix + k));
    memcpy(o->prefix + k, "+0x", 4);
    o->prefix_len = k + 3;
    o->bias = bias;
    m->objs[m->nobjs++] = o;
    return o;
}

struct build {
    struct mdp_elfmap *m;
    struct elf_seg *segs;
    size_t n, cap;
    uintptr_t vdso;
    size_t index;
    int oom;
};

static int visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    struct build *b = arg;
    size_t index = b->index++;
    const char *path = info->dlpi_name, *name;
    int vdso = 0;
    (void)size;
    for (size_t i = 0; i < info->dlpi_phnum && b->vdso; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_LOAD && b->vdso - info->dlpi_addr - p->p_vaddr < p->p_memsz)
            vdso = 1;
    }
    if (vdso) {
        path = NULL;
        name = "[vdso]";
    } else {
        if ((!path || !path[0]) && index == 0)
            path = b->m->exe; /* the main program */
        if (!path || !path[0])
            return 0; /* an object without a name: its frames stay plain `native` */
        const char *slash = strrchr(path, '/');
        name = slash ? slash + 1 : path;
        if (!name[0])
            return 0;
    }
    char id[2 * MAX_BUILDID + 1];
    build_id(info, id);
    struct elf_obj *o = NULL;
    for (size_t i = 0, nseg = 0; i < info->dlpi_phnum && nseg < MAX_SEGS_PER_OBJ; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD || !(p->p_flags & PF_X) || !p->p_memsz)
            continue;
        if (!o && !(o = find_or_add(b->m, path, name, info->dlpi_addr, id))) {
            b->oom = 1;
            return 0;
        }
        if (b->n == b->cap) {
            size_t cap = b->cap ? 2 * b->cap : 128;
            struct elf_seg *v = realloc(b->segs, cap * sizeof *v);
            if (!v) {
                b->oom = 1;
                return 1;
            }
            b->segs = v;
            b->cap = cap;
        }
        uintptr_t lo = info->dlpi_addr + p->p_vaddr;
        b->segs[b->n++] = (struct elf_seg){lo, lo + p->p_memsz, o};
        nseg++;
    }
    return 0;
}

static int by_lo(const void *a, const void *b)
{
    const struct elf_seg *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void rebuild(struct mdp_elfmap *m)
{
    struct build b = {.m = m, .vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR)};
    dl_iterate_phdr(visit, &b);
    qsort(b.segs, b.n, sizeof *b.segs, by_lo);
    /* overlapping segments (cannot happen with a sound loader) would make
     * the search ambiguous: keep the first of each overlap */
    size_t k = 0;
    for (size_t i = 0; i < b.n; i++)
        if (!k || b.segs[i].lo >= b.segs[k - 1].hi)
            b.segs[k++] = b.segs[i];
    free(m->segs);
    m->segs = b.segs;
    m->nsegs = k;
    m->built = 1;
}

static struct mdp_elfmap *elfmap(mdp_core *core)
{
    if (!core->elf && (core->elf = calloc(1, sizeof *core->elf))) {
        ssize_t n = readlink("/proc/self/exe", core->elf->exe, sizeof core->elf->exe - 1);
        core->elf->exe[n > 0 ? n : 0] = 0;
        core->elf->check = 1;
    }
    return core->elf;
}

void mdp_elf_pass(mdp_core *core)
{
    if (core->elf)
        core->elf->check = 1;
}

size_t mdp_elf_frame(mdp_core *core, uintptr_t ip, char *buf, size_t len)
{
    struct mdp_elfmap *m = elfmap(core);
    if (!m)
        return 0;
    if (m->check) {
        struct counts c = {0};
        m->check = 0;
        dl_iterate_phdr(first_only, &c);
        if (!m->built || !c.have || c.adds != m->adds || c.subs != m->subs) {
            rebuild(m);
            m->adds = c.adds;
            m->subs = c.subs;
        }
    }
    size_t lo = 0, hi = m->nsegs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (ip < m->segs[mid].lo)
            hi = mid;
        else if (ip >= m->segs[mid].hi)
            lo = mid + 1;
        else {
            struct elf_obj *o = m->segs[mid].obj;
            uintptr_t off = ip - o->bias;
            unsigned nd = mdp_hex_len(off);
            if (o->prefix_len + nd + 1 > len)
                return 0;
            memcpy(buf, o->prefix, o->prefix_len);
            mdp_hex_put(buf + o->prefix_len, off, nd);
            buf[o->prefix_len + nd] = 0;
            o->used = 1;
            return o->prefix_len + nd;
        }
    }
    return 0;
}

/* Append to a growing buffer; 0, or -1 out of memory. */
static int add(char **buf, size_t *len, size_t *cap, const char *s, size_t n)
{
    if (*len + n + 1 > *cap) {
        size_t c = *cap ? 2 * *cap : 1024;
        while (c < *len + n + 1)
            c *= 2;
        char *p = realloc(*buf, c);
        if (!p)
            return -1;
        *buf = p;
        *cap = c;
    }
    memcpy(*buf + *len, s, n);
    *len += n;
    (*buf)[*len] = 0;
    return 0;
}

char *mdp_elf_announce(mdp_core *core, size_t *len)
{
    struct mdp_elfmap *m = core->elf;
    char *buf = NULL;
    size_t cap = 0;
    *len = 0;
    if (!m)
        return NULL;
    for (size_t i = 0; i < m->nobjs; i++) {
        struct elf_obj *o = m->objs[i];
        if (!o->used || o->announced)
            continue;
        o->announcing = 1;
        if (!o->path)
            continue; /* the vDSO: no file to name */
        /* KEY is the prefix less "native:" and "+0x"; the path as the
         * header's values are written (spaces, controls, '%' as %XX) */
        if (add(&buf, len, &cap, "#elf ", 5) ||
            add(&buf, len, &cap, o->prefix + 7, o->prefix_len - 10) || add(&buf, len, &cap, " ", 1))
            goto oom;
        for (const unsigned char *c = (const unsigned char *)o->path; *c; c++) {
            char esc[4];
            int bad = *c <= 0x20 || *c == 0x7f || *c == '%';
            if (bad)
                snprintf(esc, sizeof esc, "%%%02X", *c);
            if (add(&buf, len, &cap, bad ? esc : (const char *)c, bad ? 3 : 1))
                goto oom;
        }
        if (add(&buf, len, &cap, "\n", 1))
            goto oom;
    }
    return buf;
oom:
    /* no line rather than half of one: the objects stay owed, and frames
     * whose #elf line is missing stay readable (batch says the file is
     * not named) */
    free(buf);
    *len = 0;
    for (size_t i = 0; i < m->nobjs; i++)
        m->objs[i]->announcing = 0;
    return NULL;
}

void mdp_elf_announced(mdp_core *core, int written)
{
    struct mdp_elfmap *m = core->elf;
    if (!m)
        return;
    for (size_t i = 0; i < m->nobjs; i++) {
        struct elf_obj *o = m->objs[i];
        if (o->announcing && written)
            o->announced = 1;
        o->announcing = 0;
    }
}

void mdp_elf_free(mdp_core *core)
{
    struct mdp_elfmap *m = core->elf;
    if (!m)
        return;
    for (size_t i = 0; i < m->nobjs; i++) {
        free(m->objs[i]->path);
        free(m->objs[i]->prefix);
        free(m->objs[i]);
    }
    free(m->objs);
    free(m->segs);
    free(m);
    core->elf = NULL;
}

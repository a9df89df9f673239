/* Code versions: where each version of a function's native code lies (the
 * map's code ranges, recorded at JIT time; a version split into several
 * regions also gets a record per region here) and,
 * found the first time a sample needs it, its IL-to-native map, so the
 * drain can give each frame the IL offset of the sampled instruction (a
 * leaf) or of the call (a caller).
 *
 * The map of ReadyToRun code (a version starting where one of its module's
 * runtime functions starts, inside the image's own executable mappings) is
 * read from the image as the loader mapped it (mdt_r2r_bounds: its
 * DebugInfo section, the list the runtime would give); any other code, or
 * any failure there, asks the runtime (GetILToNativeMapping3), which costs
 * a compiler process a few ms of its 2% (issue 24). A tier-1 rejit of a
 * ReadyToRun method is JIT code, outside the image: the runtime's. With
 * ilmaps=check both are asked and compared, and #stats counts agreement.
 *
 * Every version counts: tier-0 code, its tier-1 replacement and OSR code all
 * stay executable and each has its own regions and map. Code placed at an
 * address reused after an unload is of another incarnation (a generation,
 * or a region record's new serial), so an IL map cached for the code that
 * lived there before is never applied to the new code. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <time.h>

#include <mdtools/errors.h>
#include <mdtools/il.h>
#include <mdtools/pe.h>

#include "core/base.h"
#include "core/naming.h"
#include "core/naming_state.h"
#include "core/sampler.h"

/* A version whose code is one region (every JIT compilation but those the
 * JIT splits hot/cold, every ReadyToRun method named from its image) keeps
 * no region record: the map's code range is the region, and its IL map is
 * cached under (start, the function's generation), which no other version
 * shares (a generation is the seq of one function's load, and within one
 * incarnation the runtime never frees code to place other code there: an
 * unload or a dynamic method's unload starts a new one). A region record
 * (malloc, code_lock, the table's lines) cost ~1 us of each JIT callback,
 * most of it cache misses (issue 24). A version of several regions gets
 * one record each, whose serials have the top bit set so that no cache
 * key of theirs equals a generation. */
#define REGION_SERIAL_BIT (UINT64_C(1) << 63)

/* Record the regions of a version of several (fn of generation gen). A
 * range of the map without a record is taken for a whole version, and a
 * cold part taken so would get another method's IL offsets: so a region
 * stays out of the map when its record cannot be made, and the drain does
 * not take a range for a whole version while a split version is being
 * recorded (splits_pending, read under code_lock). */
static int code_split(mdp_core *core, uint64_t seq, uintptr_t fn, uint64_t gen,
                      const mdp_code_region *regions, size_t nregions)
{
    struct mdp_naming *nm = core->naming;
    int result = 0;
    size_t base = 0;
    pthread_mutex_lock(&nm->code_lock);
    nm->splits_pending++;
    pthread_mutex_unlock(&nm->code_lock);
    for (size_t i = 0; i < nregions; base += regions[i].size, i++) {
        if (!regions[i].size)
            continue;
        struct mdp_region *reg = malloc(sizeof *reg);
        if (!reg) {
            result = MDT_ENOMEM;
            continue;
        }
        int r = mdt_idmap_code_add(core->map, regions[i].start, regions[i].size, fn, seq);
        if (r < 0)
            result = r;
        if (r != MDT_IDMAP_APPLIED && r != MDT_IDMAP_DUPLICATE) {
            free(reg);
            continue;
        }
        pthread_mutex_lock(&nm->code_lock);
        *reg = (struct mdp_region){regions[i].start,
                                   regions[i].size,
                                   regions[0].start,
                                   base,
                                   ++nm->region_serial | REGION_SERIAL_BIT,
                                   fn,
                                   gen};
        struct mdp_region *old = mdp_pmap_get(&nm->regions, reg->start, 0);
        int failed = 0;
        if (old && old->size == reg->size && old->version == reg->version &&
            old->base == reg->base && old->fn == fn && old->fn_gen == gen) {
            free(reg); /* the same region again: keep its serial and IL map */
        } else if (mdp_pmap_put(&nm->regions, reg->start, 0, reg) == 0) {
            if (old) /* the drain's texts of its addresses are stale */
                atomic_fetch_add(&nm->code_epoch, 1);
            free(old);
        } else {
            free(reg);
            failed = 1;
        }
        pthread_mutex_unlock(&nm->code_lock);
        if (failed) { /* unknown rather than another method's offsets */
            mdt_idmap_code_remove(core->map, regions[i].start, seq);
            result = MDT_ENOMEM;
        }
    }
    pthread_mutex_lock(&nm->code_lock);
    nm->splits_pending--;
    pthread_mutex_unlock(&nm->code_lock);
    return result;
}

int mdp_ev_code(mdp_core *core, uint64_t seq, uintptr_t fn, const mdp_code_region *regions,
                size_t nregions)
{
    size_t used = 0;
    for (size_t i = 0; i < nregions; i++)
        used += regions[i].size != 0;
    if (nregions && regions[0].size && used == 1) {
        int r = mdt_idmap_code_add(core->map, regions[0].start, regions[0].size, fn, seq);
        return r < 0 ? r : 0;
    }
    mdt_idmap_function_info fi;
    uint64_t gen = mdt_idmap_function_lookup(&fi, NULL, 0, core->map, fn, 0) == 0 ? fi.gen : 0;
    return code_split(core, seq, fn, gen, regions, nregions);
}

int mdp_code_region_get(mdp_core *core, const mdt_idmap_code_range *r, struct mdp_region *out)
{
    struct mdp_naming *nm = core->naming;
    pthread_mutex_lock(&nm->code_lock);
    struct mdp_region *reg = mdp_pmap_get(&nm->regions, r->start, 0);
    int split =
        reg && reg->fn == r->function_id && reg->fn_gen == r->function_gen && reg->size == r->size;
    int pending = nm->splits_pending != 0;
    if (split)
        *out = *reg;
    pthread_mutex_unlock(&nm->code_lock);
    if (split)
        return 0;
    if (pending) /* perhaps a part whose record is on its way */
        return -1;
    /* a version of one region (a record at r->start is of code since freed) */
    *out = (struct mdp_region){r->start,        r->size,        r->start,       0,
                               r->function_gen, r->function_id, r->function_gen};
    return 0;
}

/* A map's entries by native start, then end, then IL offset: the order
 * the drain's lookups need, and one order for ilmaps=check to compare. */
static int by_entry(const void *a, const void *b)
{
    const struct mdp_il_entry *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    if (x->end != y->end)
        return x->end < y->end ? -1 : 1;
    return x->il < y->il ? -1 : x->il > y->il;
}

/* A map in by_entry's order. The runtime's maps and the image's mostly
 * come in native order already: checked first, they are sorted only when
 * they are not (qsort, which allocates, was ~5% of a compiler's drain
 * for maps that were sorted). */
static void sort_entries(mdp_core *core, struct mdp_ilmap *m)
{
    for (size_t i = 1; i < m->n; i++)
        if (by_entry(&m->e[i - 1], &m->e[i]) > 0) {
#ifdef MDP_BENCH_CLOCK
            core->stats.bench_ilmap_unsorted++;
#else
            (void)core;
#endif
            qsort(m->e, m->n, sizeof m->e[0], by_entry);
            return;
        }
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The module's ReadyToRun debug info, opened at its first use (mods_lock
 * held); NULL when the module has none. */
static const mdt_r2r_debug *module_debug(struct mdp_module *m)
{
    if (!m->r2r_debug_tried) {
        m->r2r_debug_tried = 1;
        /* its own talloc context, not the module's (whose image other
         * threads read); freed with the module (modules.c) */
        if (m->image && m->rf && mdt_r2r_debug_open(&m->r2r_debug, NULL, m->image))
            mdt_error_clear();
    }
    return m->r2r_debug;
}

/* The IL map of version r from its module's image: NULL when r is not
 * ReadyToRun code of a live module, or the image's debug info says
 * nothing usable (the caller asks the runtime). drain_lock held: the
 * image lives while it is (unloads take it). */
static struct mdp_ilmap *image_ilmap(mdp_core *core, const struct mdp_region *r)
{
    mdt_idmap_function_info fi;
    if (r->base != 0 || mdt_idmap_function_lookup(&fi, NULL, 0, core->map, r->fn, r->fn_gen) != 0)
        return NULL;
    const mdt_r2r_debug *d = NULL;
    uintptr_t base = 0;
    pthread_mutex_lock(&core->mods_lock);
    struct mdp_module *m = mdp_module_get(core, fi.module);
    if (m && m->rf && (uintptr_t)m->base <= r->version &&
        r->version - (uintptr_t)m->base <= UINT32_MAX) {
        /* only code inside the image's own executable mappings */
        for (size_t i = 0; i < m->nexec && !d; i++) {
            uintptr_t lo = (uintptr_t)m->exec[i].start;
            if (r->version >= lo && r->version - lo < m->exec[i].len)
                d = module_debug(m);
        }
        base = (uintptr_t)m->base;
    }
    pthread_mutex_unlock(&core->mods_lock);
    uint32_t index;
    if (!d || mdt_r2r_function_at(&index, d, (uint32_t)(r->version - base)) != 0) {
        mdt_error_clear();
        return NULL;
    }
    mdt_r2r_bound buf[64], *b = buf;
    size_t cap = sizeof buf / sizeof buf[0], n = 0;
    int e = mdt_r2r_bounds(b, cap, &n, d, index, MDT_R2R_BOUNDS_RUNTIME);
    if (e == 0 && n > cap) { /* a large method: again, into a buffer of its raw count */
        cap = n;
        if (!(b = malloc(cap * sizeof *b)))
            return NULL;
        e = mdt_r2r_bounds(b, cap, &n, d, index, MDT_R2R_BOUNDS_RUNTIME);
    }
    struct mdp_ilmap *out = NULL;
    if (e == 0 && n <= cap && (out = malloc(sizeof *out + (n ? n : 1) * sizeof out->e[0]))) {
        out->n = n;
        for (size_t i = 0; i < n; i++) {
            uint32_t end = b[i].native_end;
            if (b[i].source & MDT_R2R_SOURCE_END_UNKNOWN)
                end = (uint32_t)r->size; /* what the runtime gives: the code's size */
            out->e[i] = (struct mdp_il_entry){b[i].il, b[i].native_start, end};
        }
    }
    if (e)
        mdt_error_clear();
    if (b != buf)
        free(b);
    return out;
}

/* The runtime's IL map of version r (malloc), NULL when it has none. */
static struct mdp_ilmap *runtime_ilmap(mdp_core *core, const struct mdp_region *r)
{
    if (!mdp_ops_live(core) || !core->ops.il_map)
        return NULL;
    size_t cap = 64;
    for (int tries = 0; tries < 4; tries++) {
        struct mdp_ilmap *m = malloc(sizeof *m + cap * sizeof m->e[0]);
        if (!m)
            return NULL;
        int n = core->ops.il_map(core->ops.payload, r->version, m->e, cap);
        if (n < 0)
            n = 0;
        if ((size_t)n <= cap) {
            m->n = (size_t)n;
            return m;
        }
        free(m);
        cap = (size_t)n;
    }
    return NULL;
}

/* ilmaps=check: the image's map against the runtime's, entry for entry
 * (both in one order); a difference is noted (the first few). */
static void check(mdp_core *core, const struct mdp_region *r, struct mdp_ilmap *img,
                  struct mdp_ilmap *rt)
{
    qsort(img->e, img->n, sizeof img->e[0], by_entry);
    qsort(rt->e, rt->n, sizeof rt->e[0], by_entry);
    size_t i = 0;
    while (i < img->n && i < rt->n && memcmp(&img->e[i], &rt->e[i], sizeof img->e[0]) == 0)
        i++;
    if (i == img->n && i == rt->n) {
        core->stats.ilmap_agree++;
        return;
    }
    if (core->stats.ilmap_disagree++ < 8) {
        struct mdp_il_entry z = {0, 0, 0};
        const struct mdp_il_entry *a = i < img->n ? &img->e[i] : &z,
                                  *b = i < rt->n ? &rt->e[i] : &z;
        mdp_note(core,
                 "IL map of the code at %#" PRIxPTR " (%zu bytes): the image's %zu entries, "
                 "the runtime's %zu; entry %zu: image il %#x %#x-%#x, runtime il %#x %#x-%#x",
                 r->version, r->size, img->n, rt->n, i, a->il, a->start, a->end, b->il, b->start,
                 b->end);
    }
}

/* ilmaps=check: both ways, timed, compared; the runtime's map is kept.
 * Which goes first alternates: the first pays for reading the image's
 * pages (both read the same DebugInfo bytes). */
static struct mdp_ilmap *check_both(mdp_core *core, const struct mdp_region *r)
{
    struct mdp_ilmap *img = NULL, *rt = NULL;
    uint64_t t_img = 0, t_rt = 0;
    int image_first = (core->stats.ilmap_image & 1) == 0;
    for (int k = 0; k < 2; k++) {
        uint64_t t0 = cpu_ns();
        if ((k == 0) == image_first) {
            img = image_ilmap(core, r);
            t_img = cpu_ns() - t0;
        } else {
            rt = runtime_ilmap(core, r);
            t_rt = cpu_ns() - t0;
        }
    }
    if (!rt) {
        free(img);
        return NULL;
    }
    core->stats.ilmap_runtime++;
    if (img) { /* ReadyToRun code: the two compared, each one's time counted */
        core->stats.ilmap_image++;
        core->stats.ilmap_image_ns += t_img;
        core->stats.ilmap_runtime_ns += t_rt;
        check(core, r, img, rt);
        free(img);
    }
    return rt;
}

/* An empty map is cached too (as n == 0) so a method without one is asked
 * about once. */
const struct mdp_ilmap *mdp_code_ilmap(mdp_core *core, const struct mdp_region *r)
{
    struct mdp_ilmap *m = mdp_pmap_get(&core->naming->ilmaps, r->version, r->serial);
    if (m)
        return m->n ? m : NULL;
    int mode = core->cfg.ilmaps;
    if (mode == MDP_ILMAPS_CHECK) {
        m = check_both(core, r);
    } else {
        struct mdp_ilmap *img = mode == MDP_ILMAPS_IMAGE ? image_ilmap(core, r) : NULL;
        if (img) {
            m = img;
            core->stats.ilmap_image++;
        } else if ((m = runtime_ilmap(core, r))) {
            core->stats.ilmap_runtime++;
        }
    }
    if (!m)
        return NULL;
    sort_entries(core, m);
    if (mdp_pmap_put(&core->naming->ilmaps, r->version, r->serial, m) != 0) {
        free(m);
        return NULL;
    }
    return m->n ? m : NULL;
}

static void free_val(void *payload, mdp_key key, void *val)
{
    free(val);
}

void mdp_code_forget_ilmaps(mdp_core *core)
{
    mdp_pmap_each(&core->naming->ilmaps, free_val, NULL);
    mdp_pmap_free(&core->naming->ilmaps);
}

void mdp_code_free(mdp_core *core)
{
    mdp_code_forget_ilmaps(core);
    mdp_pmap_each(&core->naming->regions, free_val, NULL);
    mdp_pmap_free(&core->naming->regions);
}

int mdp_naming_new(mdp_core *core)
{
    struct mdp_naming *n = calloc(1, sizeof *n); /* every table empty */
    if (!n)
        return -1;
    pthread_mutex_init(&n->code_lock, NULL);
    core->naming = n;
    return 0;
}

void mdp_naming_free(mdp_core *core)
{
    if (!core->naming)
        return;
    mdp_frames_free(core);
    mdp_code_free(core);
    pthread_mutex_destroy(&core->naming->code_lock);
    free(core->naming);
    core->naming = NULL;
}

/* ---- ReadyToRun methods named from the image (issue 24) ----
 *
 * The map's miss callback meets a sampled address nobody reported; for
 * ReadyToRun code the runtime's answer (GetFunctionFromIP3, then
 * GetFunctionInfo2 and the code's regions) is the largest part of what a
 * compiler process's drain still asks it. A non-generic method's is in
 * the image: its MethodDef from the entry points (mdt_r2r_methods), its
 * code the runtime functions from its entry to its last funclet. It goes
 * into the map under a pseudo FunctionID (the code's address, odd), so
 * the frame's text is the runtime path's: MVID:token, no type arguments
 * (a non-generic method of a non-generic type has none). */

/* The misses in a module's code the runtime names before its entry points
 * are read: opening them costs ~1-2 ms for the largest images (the
 * framework's CoreLib, the compiler's), ~300 namings by the runtime
 * (~5 us each), so a module sampled in a few methods only never pays it. */
#define MDP_R2R_OPEN_AFTER 16u

/* The module's entry points, opened outside mods_lock (module loads must
 * not wait on it) at its MDP_R2R_OPEN_AFTER-th miss: drain_lock held, so
 * the module and its image stay (unloads take it). */
static const mdt_r2r_methods *module_methods(mdp_core *core, uintptr_t id, uintptr_t *base,
                                             mdt_image **image)
{
    pthread_mutex_lock(&core->mods_lock);
    struct mdp_module *m = mdp_module_get(core, id);
    const mdt_r2r_methods *rm = NULL;
    mdt_image *img = NULL;
    if (m && m->rf && m->image) {
        *base = (uintptr_t)m->base;
        *image = m->image;
        rm = m->r2r_methods;
        if (!m->r2r_methods_tried && ++m->r2r_misses >= MDP_R2R_OPEN_AFTER) {
            m->r2r_methods_tried = 1;
            img = m->image;
        }
    }
    pthread_mutex_unlock(&core->mods_lock);
    if (!img)
        return rm;
    mdt_r2r_methods *opened = NULL;
    uint64_t t0 = cpu_ns();
    if (mdt_r2r_methods_open(&opened, NULL, img) != 0)
        mdt_error_clear();
    core->stats.r2rname_open_ns += cpu_ns() - t0;
    pthread_mutex_lock(&core->mods_lock);
    m = mdp_module_get(core, id);
    if (m && m->image == img && !m->r2r_methods) {
        m->r2r_methods = opened;
        opened = NULL;
        rm = m->r2r_methods;
    }
    pthread_mutex_unlock(&core->mods_lock);
    talloc_free(opened);
    return rm;
}

int mdp_code_r2r_name(mdp_core *core, uintptr_t ip, mdp_r2r_name *out)
{
    uintptr_t id = 0, base = 0;
    pthread_mutex_lock(&core->mods_lock);
    int in = mdp_exec_module_of(core, ip, &id);
    pthread_mutex_unlock(&core->mods_lock);
    if (!in)
        return -1;
    mdt_image *img = NULL;
    const mdt_r2r_methods *rm = module_methods(core, id, &base, &img);
    mdt_r2r_method x;
    mdt_il_body body;
    /* a method without IL (a P/Invoke's or QCall's compiled stub) is left
     * to the runtime: it names those its own way */
    if (!rm || ip < base || ip - base > UINT32_MAX ||
        mdt_r2r_method_at_rva(&x, rm, (uint32_t)(ip - base)) != 0 ||
        mdt_il_body_get(&body, img, x.token) != 0) {
        mdt_error_clear();
        return -1;
    }
    *out = (mdp_r2r_name){(base + x.rva) | 1u, id, x.token, base + x.rva, x.size};
    return 0;
}

int mdp_code_r2r_enter(mdp_core *core, uint64_t seq, const mdp_r2r_name *n, uint64_t t0)
{
    mdt_idmap_function_info fi = {.module = n->module, .token = n->token};
    int r = mdt_idmap_function_load(core->map, n->fn, &fi, seq);
    if (r < 0)
        return r;
    mdp_code_region reg = {n->start, n->size};
    r = mdp_ev_code(core, seq, n->fn, &reg, 1);
    mdt_idmap_code_range cr;
    if (r < 0 || mdt_idmap_ip_lookup(&cr, core->map, n->start) != 0 || cr.function_id != n->fn)
        return r < 0 ? r : MDT_ENOTFOUND; /* the runtime is asked */
    core->stats.r2rname_image++;
    core->stats.r2rname_image_ns += cpu_ns() - t0;
    return 0;
}

void mdp_code_r2r_runtime(mdp_core *core, uintptr_t ip, uint64_t ns, const mdp_r2r_name *img,
                          uint64_t img_ns)
{
    core->stats.r2rname_runtime++;
    core->stats.r2rname_runtime_ns += ns;
    if (!img)
        return;
    /* what the runtime's answer put in the map for ip, against the image */
    mdt_idmap_code_range cr;
    mdt_idmap_function_desc d;
    uintptr_t args[8];
    const char *why = NULL;
    memset(&cr, 0, sizeof cr);
    memset(&d, 0, sizeof d);
    if (mdt_idmap_ip_lookup(&cr, core->map, ip) != 0)
        why = "the runtime named no code";
    else if (mdt_idmap_function_describe(&d, args, 8, core->map, cr.function_id, 0) != 0)
        why = "the runtime's function is not in the map";
    else if (d.module != img->module || d.token != img->token)
        why = "another method";
    else if (d.nargs || d.class_nargs)
        why = "a generic method or type";
    else if (cr.start != img->start || cr.size != img->size)
        why = "another code range";
    core->stats.r2rname_image_ns += img_ns;
    if (!why) {
        core->stats.r2rname_agree++;
        return;
    }
    if (core->stats.r2rname_disagree++ < 8)
        mdp_note(core,
                 "ReadyToRun method at %#" PRIxPTR ": %s; the image's %#" PRIxPTR " token %#x "
                 "code %#" PRIxPTR "+%#zx, the runtime's %#" PRIxPTR " token %#x code %#" PRIxPTR
                 "+%#zx",
                 ip, why, img->module, img->token, img->start, img->size, d.module, d.token,
                 cr.start, cr.size);
}

/* Module events: open each module's image where the runtime's loader put it
 * and record the module in the map (ModuleLoadFinished, EnumModules items,
 * ModuleAttachedToAssembly, the unloads).
 *
 * The image is read in place, never copied from the file again: a flat
 * layout (the file's bytes, as CoreCLR maps IL-only assemblies) with
 * mdt_image_open_buffer borrowing the bytes, a loader layout with
 * mdt_image_open_mapped_ranges. What may be read is never taken from the
 * PE headers: the image's own mappings come from /proc/self/maps (maps.c),
 * so a damaged header makes the open fail (the module is then recorded
 * without an image and its frames are "unknown:nomvid") but never fault.
 * ReadyToRun images on Linux are mapped section by section with PROT_NONE
 * gaps; the library reads them in place, checking every read against the
 * readable ranges. Their executable mappings go to the handler's table
 * (execmap.c), republished on every load that brings some and on every
 * module, assembly or AppDomain unload. (The runtime's own flat view of the same file is not
 * used: CoreCLR keeps it in the PEImage until the PEImage is destroyed,
 * but that is an implementation detail, not a promise of the profiling
 * API, and the view exists only when the binder asked for a flat layout
 * before the loaded one.) Dynamic and resource modules have no image. The
 * core library's primitive types (System.Int32, ..., System.__Canon) are
 * located by name once, so that classes and type arguments print as the
 * naming spec's primitives. */
#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/names.h>
#include <mdtools/pe.h>

#include "core/base.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/drain.h"
#include "core/modes.h"
#include "core/log.h"
#include "core/lifetime.h"

static const struct {
    const char *name;
    uint8_t code;
} prims[] = {
    {"System.Void", 0x01},
    {"System.Boolean", 0x02},
    {"System.Char", 0x03},
    {"System.SByte", 0x04},
    {"System.Byte", 0x05},
    {"System.Int16", 0x06},
    {"System.UInt16", 0x07},
    {"System.Int32", 0x08},
    {"System.UInt32", 0x09},
    {"System.Int64", 0x0a},
    {"System.UInt64", 0x0b},
    {"System.Single", 0x0c},
    {"System.Double", 0x0d},
    {"System.String", 0x0e},
    {"System.TypedReference", 0x16},
    {"System.IntPtr", 0x18},
    {"System.UIntPtr", 0x19},
    {"System.Object", 0x1c},
    {"System.__Canon", MDT_IDMAP_PRIM_CANON},
};

static void find_prims(mdp_core *core, struct mdp_module *m)
{
    for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++) {
        uint32_t tok = 0;
        if (mdt_typedef_by_name(&tok, m->image, prims[i].name, strlen(prims[i].name)) == 0) {
            m->prim_tokens[i] = tok;
            m->prim_codes[i] = prims[i].code;
        }
    }
}

/* A ReadyToRun image's RuntimeFunctions section (type 102: x64 entries of
 * three RVAs, begin, end and unwind data, sorted by begin), for the
 * handler to unwind through methods the map has not learnt yet
 * (execmap.c): their code ranges without asking the runtime. Used only
 * when the whole table lies in one readable range of the image; the
 * handler checks each entry it uses against the executable range. */
static void r2r_functions(mdp_core *core, struct mdp_module *m, const mdt_mem_range *ranges,
                          size_t n)
{
    mdt_r2r_header h;
    mdt_r2r_section sec;
    if (mdt_r2r_header_read(&h, m->image) != 0)
        return;
    for (uint32_t i = 0; i < h.nsections && i < 64; i++) {
        if (mdt_r2r_section_read(&sec, m->image, i) != 0 || sec.type != 102)
            continue;
        if (sec.size == 0 || sec.size % 12 != 0 || sec.size / 12 > UINT32_MAX)
            return;
        uintptr_t lo = (uintptr_t)m->base + sec.rva, hi = lo + sec.size;
        if (lo < (uintptr_t)m->base)
            return;
        for (size_t k = 0; k < n; k++)
            if ((uintptr_t)ranges[k].start <= lo &&
                hi <= (uintptr_t)ranges[k].start + ranges[k].len) {
                m->rf = (const uint32_t *)lo;
                m->nrf = sec.size / 12;
                mdp_log(core, "module %#" PRIxPTR ": %u ReadyToRun functions", m->id, m->nrf);
                return;
            }
        return;
    }
}

static void open_image(mdp_core *core, struct mdp_module *m)
{
    if ((m->flags & (MDP_MODULE_DYNAMIC | MDP_MODULE_RESOURCE | MDP_MODULE_STUBS)) || !m->base)
        return;
    mdt_mem_range ranges[MDP_MAX_IMAGE_RANGES], exec[MDP_MAX_IMAGE_RANGES];
    size_t nexec = 0;
    size_t n = mdp_image_ranges(m->base, !(m->flags & MDP_MODULE_FLAT), ranges,
                                MDP_MAX_IMAGE_RANGES, exec, &nexec);
    if (n == 0) {
        mdp_log(core, "module %#" PRIxPTR " %s: base %p is not readable", m->id, m->path, m->base);
        return;
    }
    m->ctx = talloc_new(NULL);
    if (!m->ctx)
        return;
    const char *name = m->path[0] ? m->path : "(module without a path)";
    /* A flat layout is the file's bytes: the readable run from the base. */
    int e = (m->flags & MDP_MODULE_FLAT)
                ? mdt_image_open_buffer(m->ctx, &m->image, name, m->base, ranges[0].len, 0)
                : mdt_image_open_mapped_ranges(m->ctx, &m->image, name, m->base, ranges, n, 0);
    mdp_log(core, "module %#" PRIxPTR ": %s layout at %p, %zu readable range%s", m->id,
            (m->flags & MDP_MODULE_FLAT) ? "flat" : "loader", m->base, n, n == 1 ? "" : "s");
    if (e != 0) {
        char msg[512];
        mdp_log(core, "module %#" PRIxPTR ": cannot read its image: %s", m->id,
                mdt_error_message(msg, sizeof msg));
        talloc_free(m->ctx);
        m->ctx = NULL;
        m->image = NULL;
        return;
    }
    /* A loader layout's executable mappings hold its ReadyToRun code (a
     * flat layout is the file's bytes, never run). */
    if (!(m->flags & MDP_MODULE_FLAT) && nexec && (m->exec = malloc(nexec * sizeof *exec))) {
        memcpy(m->exec, exec, nexec * sizeof *exec);
        m->nexec = nexec;
        r2r_functions(core, m, ranges, n);
    }
    if (mdt_image_mvid(m->mvid, m->image) != 0)
        memset(m->mvid, 0, sizeof m->mvid);
    if (mdt_assembly_identity(&m->identity, m->image) == 0) {
        m->has_identity = 1;
        /* copied: the image's bytes go with the module's unload, its
         * #module line may be written after that */
        m->name = strdup(m->identity.name ? m->identity.name : "");
        memcpy(m->version, m->identity.version, sizeof m->version);
        m->corelib = strcmp(m->identity.name, "System.Private.CoreLib") == 0 ||
                     strcmp(m->identity.name, "mscorlib") == 0;
        if (m->corelib) {
            find_prims(core, m);
            mdp_corelib_note(core, m->path);
        }
    }
}

static void free_module(struct mdp_module *m)
{
    if (!m)
        return;
    talloc_free(m->r2r_debug);   /* codemap.c's handle on its debug info */
    talloc_free(m->r2r_methods); /* and on its entry points */
    talloc_free(m->ctx);
    free(m->exec);
    free(m->path);
    free(m->name);
    free(m);
}

/* Records the map may still point at (images are borrowed by the map until
 * the module's unload, and an unload can race with nothing here only after
 * mdt_idmap_synchronize): kept until the core is freed. */
static void bury(mdp_core *core, struct mdp_module *m)
{
    if (core->ngraveyard == core->graveyard_cap) {
        size_t cap = core->graveyard_cap ? core->graveyard_cap * 2 : 16;
        struct mdp_module **g = realloc(core->graveyard, cap * sizeof *g);
        if (!g)
            return; /* leak rather than free what a reader may use */
        core->graveyard = g;
        core->graveyard_cap = cap;
    }
    core->graveyard[core->ngraveyard++] = m;
}

int mdp_ev_module_load(mdp_core *core, uint64_t seq, uintptr_t id, const mdp_module_desc *d)
{
    if (!id)
        return MDT_EINVAL;
    const char *path = d->path ? d->path : "";
    pthread_mutex_lock(&core->mods_lock);
    struct mdp_module *old = mdp_module_get(core, id);
    mdt_idmap_module_info cur;
    if (old && old->base == d->base && strcmp(old->path, path) == 0 &&
        mdt_idmap_module_lookup(&cur, core->map, id, 0) == 0) {
        /* The same module again (an event and an enumeration item): reuse
         * its image so that the map sees a repeat, not a new incarnation. */
        mdt_idmap_module_info info = cur;
        info.path = old->path;
        info.assembly = d->assembly;
        info.appdomain = d->appdomain;
        int r = mdt_idmap_module_load(core->map, id, &info, seq);
        pthread_mutex_unlock(&core->mods_lock);
        return r;
    }
    struct mdp_module *m = calloc(1, sizeof *m);
    char *p = strdup(path);
    if (!m || !p) {
        free(m);
        free(p);
        pthread_mutex_unlock(&core->mods_lock);
        return MDT_ENOMEM;
    }
    m->id = id;
    m->base = d->base;
    m->path = p;
    m->flags = d->flags;
    open_image(core, m);
    if (m->image && m->path[0])
        mdp_folders_note(core, m->path); /* the header's frameworks= or folders= */
    mdt_idmap_module_info info = {
        .image = m->image,
        .path = m->path,
        .appdomain = d->appdomain,
        .assembly = d->assembly,
        .identity = m->has_identity ? &m->identity : NULL,
    };
    memcpy(info.mvid, m->mvid, 16);
    int r = mdt_idmap_module_load(core->map, id, &info, seq);
    if (r == MDT_IDMAP_APPLIED) {
        if (old)
            bury(core, mdp_pmap_del(&core->modules, id, 0));
        int kept = mdp_pmap_put(&core->modules, id, 0, m) == 0;
        if (!kept)
            bury(core, m);
        if (old) /* the table may hold the replaced module's ranges */
            mdp_exec_publish(core);
        else if (kept && m->nexec)
            mdp_exec_publish_add(core, m);
    } else {
        free_module(m);
    }
    pthread_mutex_unlock(&core->mods_lock);
    mdp_log(core, "module %#" PRIxPTR " %s%s%s: %s", id, path,
            d->flags & MDP_MODULE_DYNAMIC ? " (dynamic)" : "",
            d->flags & MDP_MODULE_FLAT ? " (flat)" : "",
            r < 0                    ? "failed"
            : r == MDT_IDMAP_APPLIED ? "recorded"
                                     : "known");
    return r;
}

int mdp_ev_module_assembly(mdp_core *core, uint64_t seq, uintptr_t id, uintptr_t assembly)
{
    pthread_mutex_lock(&core->mods_lock);
    mdt_idmap_module_info cur;
    int r = mdt_idmap_module_lookup(&cur, core->map, id, 0);
    struct mdp_module *m = mdp_module_get(core, id);
    if (r == 0 && m) {
        cur.path = m->path;
        cur.assembly = assembly;
        r = mdt_idmap_module_load(core->map, id, &cur, seq);
    }
    pthread_mutex_unlock(&core->mods_lock);
    return r;
}

/* The unloads: drain first (frames sampled before the unload get the names
 * the map still has), then apply, then wait out readers that overlapped:
 * the map's, and for the unload of modules every handler, which may be
 * reading an image's code through the executable ranges (execmap.c). */
static int unload(mdp_core *core, int (*fn)(mdt_idmap *, uintptr_t, uint64_t), uintptr_t id,
                  uint64_t seq, const char *what, int modules)
{
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    mdp_calls_flush(core);
    mdp_alloc_flush(core);
    int r = fn(core->map, id, seq);
    atomic_fetch_add(&core->life->unloads, 1); /* tombstones to retire (seqs.c) */
    mdt_idmap_synchronize(core->map);
    if (modules) {
        pthread_mutex_lock(&core->mods_lock);
        mdp_exec_publish(core);
        pthread_mutex_unlock(&core->mods_lock);
    }
    mdp_log(core, "%s %#" PRIxPTR ": %d", what, id, r);
    /* Addresses that were nobody's may now be reused by new code. */
    mdp_frames_forget_ips(core);
    pthread_mutex_unlock(&core->drain_lock);
    return r;
}

int mdp_ev_module_unload(mdp_core *core, uint64_t seq, uintptr_t id)
{
    return unload(core, mdt_idmap_module_unload, id, seq, "module unload", 1);
}

int mdp_ev_assembly_unload(mdp_core *core, uint64_t seq, uintptr_t assembly)
{
    return unload(core, mdt_idmap_assembly_unload, assembly, seq, "assembly unload", 1);
}

int mdp_ev_appdomain_shutdown(mdp_core *core, uint64_t seq, uintptr_t appdomain)
{
    return unload(core, mdt_idmap_appdomain_shutdown, appdomain, seq, "appdomain shutdown", 1);
}

int mdp_ev_class_unload(mdp_core *core, uint64_t seq, uintptr_t cls)
{
    return unload(core, mdt_idmap_class_unload, cls, seq, "class unload", 0);
}

int mdp_ev_function_unload(mdp_core *core, uint64_t seq, uintptr_t fn)
{
    return unload(core, mdt_idmap_function_unload, fn, seq, "function unload", 0);
}

void mdp_ev_class_loaded(mdp_core *core)
{
    atomic_fetch_add_explicit(&core->stats.class_loads, 1, memory_order_relaxed);
}

int mdp_ev_class_load(mdp_core *core, uint64_t seq, uintptr_t cls, const mdt_idmap_class_info *info)
{
    mdt_idmap_class_info ci = *info;
    if (ci.shape == MDT_IDMAP_SHAPE_TYPEDEF && ci.prim == MDT_IDMAP_PRIM_NONE) {
        pthread_mutex_lock(&core->mods_lock);
        struct mdp_module *m = mdp_module_get(core, ci.module);
        if (m && m->corelib)
            for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
                if (m->prim_tokens[i] && m->prim_tokens[i] == ci.token)
                    ci.prim = m->prim_codes[i];
        pthread_mutex_unlock(&core->mods_lock);
    }
    return mdt_idmap_class_load(core->map, cls, &ci, seq);
}

uintptr_t mdp_ev_prim_class(mdp_core *core, uint64_t seq, unsigned elem)
{
    /* primitive element types: VOID..STRING, TYPEDBYREF, I, U, OBJECT */
    if (!((elem >= 0x01 && elem <= 0x0e) || elem == 0x16 || elem == 0x18 || elem == 0x19 ||
          elem == 0x1c))
        return 0;
    uintptr_t id = MDP_PRIM_CLASS_BASE + elem;
    mdt_idmap_class_info ci = {.module = MDP_PRIM_MODULE,
                               .token = 0x02000000u,
                               .shape = MDT_IDMAP_SHAPE_TYPEDEF,
                               .prim = (uint8_t)elem};
    return mdt_idmap_class_load(core->map, id, &ci, seq) < 0 ? 0 : id;
}

int mdp_ev_function_load(mdp_core *core, uint64_t seq, uintptr_t fn,
                         const mdt_idmap_function_info *info)
{
    return mdt_idmap_function_load(core->map, fn, info, seq);
}

static void free_entry(void *payload, mdp_key key, void *val)
{
    free_module(val);
}

void mdp_modules_free(mdp_core *core)
{
    mdp_pmap_each(&core->modules, free_entry, NULL);
    mdp_pmap_free(&core->modules);
    for (size_t i = 0; i < core->ngraveyard; i++)
        free_module(core->graveyard[i]);
    free(core->graveyard);
    core->graveyard = NULL;
    core->ngraveyard = core->graveyard_cap = 0;
}

/* Naming frames for the log (drain thread, drain_lock held).
 *
 * A sampled function incarnation (FunctionID, generation) becomes the text
 * of doc/profile-log.md: the module's MVID, the MethodDef token, the class's
 * type arguments in {...} and the method's in <...>, each a portable
 * descriptor (<mdtools/descriptor.h>, mdt_idmap_class_descriptor). The text
 * and, with --debug-names, the in-process name (mdt_idmap_function_name)
 * are built once per incarnation and cached; a frame's whole text at one
 * address (the incarnation's text and the IL offset of that address) is
 * cached too, per (address, generation), so that a frame seen before costs
 * the drain one table lookup and a copy (bench/profiler/README.md, "One
 * read per frame"). What the map does not know is
 * fetched through its miss callback (the adapter asks the runtime, off the
 * signal path). Frames that are no method get a special word: "native"
 * (inside a shared object the ELF table of elfmap.c did not name: it names
 * most, `native:FILE:BUILDID+0xOFF`), "stub" (executable
 * memory that the runtime says holds no method), "dynamic" (a method of a
 * Reflection.Emit module), "unknown:..." for what cannot be named. */
#include "config.h"

#define _GNU_SOURCE
#include <dlfcn.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/heaps.h>
#include <mdtools/il.h>
#include <mdtools/names.h>

#include "core/base.h"
#include "core/hex.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/naming_state.h"

const char *const mdp_frame_kind_text[FK_COUNT] = {
    [FK_MANAGED] = "managed",           [FK_NATIVE] = "native",
    [FK_DYNAMIC] = "dynamic",           [FK_STUB] = "stub",
    [FK_UNMAPPED] = "unknown:unmapped", [FK_UNLOADED] = "unknown:unloaded",
    [FK_NOMVID] = "unknown:nomvid",
};

void mdp_mvid_hex(char out[33], const uint8_t g[16])
{
    /* The GUID's canonical text (the library's, mdt_heap_guid_format: Data1..Data3
     * stored little-endian in #GUID and printed as numbers) without dashes:
     * once per frame incarnation and per module line, not per sample. */
    char t[37];
    mdt_heap_guid_format(t, g);
    size_t n = 0;
    for (const char *p = t; *p; p++)
        if (*p != '-')
            out[n++] = *p;
    out[n] = 0;
}

static int mvid_zero(const uint8_t m[16])
{
    for (int i = 0; i < 16; i++)
        if (m[i])
            return 0;
    return 1;
}

/* Make sure the map knows `cls` and, recursively, its type arguments. */
static void ensure_class(mdp_core *core, uintptr_t cls, int depth)
{
    mdt_idmap_class_info ci;
    uintptr_t args[MDP_MAX_TARGS];
    if (depth > 32)
        return;
    int r = mdt_idmap_class_lookup(&ci, args, MDP_MAX_TARGS, core->map, cls, 0);
    if (r != 0 && mdp_ops_live(core))
        r = mdt_idmap_class_fetch(&ci, args, MDP_MAX_TARGS, core->map, cls);
    if (r != 0)
        return;
    uint32_t n = ci.nargs < MDP_MAX_TARGS ? ci.nargs : MDP_MAX_TARGS;
    for (uint32_t i = 0; i < n; i++)
        ensure_class(core, args[i], depth + 1);
}

/* A class's descriptor text, kept per class ID: an incarnation's type
 * arguments are the same few classes again and again, and each build read
 * the class, its module and its arguments' in the map anew (~1.3 us of a
 * compiler's ~30 a new stack: bench/profiler/README.md, "the drain per new
 * deep stack"). Only whole texts are kept, and every unload drops them all
 * (mdp_frames_forget_ips, which the unload events call with drain_lock
 * held): a class ID can name another class only after its class, module,
 * assembly or domain was unloaded. */
struct class_text {
    size_t len;
    char s[];
};

#define MDP_CLASS_TEXTS_MAX 65536u

static void free_val(void *payload, mdp_key key, void *val);

int mdp_class_desc(mdp_core *core, uintptr_t cls, char *buf, size_t len)
{
    mdp_pmap *texts = &core->naming->class_texts;
    const struct class_text *t = mdp_pmap_get(texts, cls, 0);
    if (t) {
        if (t->len >= len)
            return MDT_EUNSUPPORTED;
        memcpy(buf, t->s, t->len + 1);
        return (int)t->len;
    }
    int r = mdt_idmap_class_descriptor(buf, len, core->map, cls, 0);
    if (r == MDT_ENOTFOUND) {
        ensure_class(core, cls, 0);
        r = mdt_idmap_class_descriptor(buf, len, core->map, cls, 0);
    }
    if (r < 0 || (size_t)r >= len)
        return r < 0 ? r : MDT_EUNSUPPORTED;
    if (texts->n >= MDP_CLASS_TEXTS_MAX) {
        mdp_pmap_each(texts, free_val, NULL);
        mdp_pmap_free(texts);
    }
    struct class_text *n = malloc(sizeof *n + (size_t)r + 1);
    if (n) {
        n->len = (size_t)r;
        memcpy(n->s, buf, (size_t)r + 1);
        if (mdp_pmap_put(texts, cls, 0, n) != 0)
            free(n);
    }
    return r;
}

/* Append "{a,b}" / "<a,b>" for n class IDs. */
static int add_args(mdp_core *core, char *buf, size_t len, size_t *pos, char open, char close,
                    const uintptr_t *ids, uint32_t n)
{
    if (!n)
        return 0;
    for (uint32_t i = 0; i < n; i++) {
        if (*pos + 2 >= len)
            return MDT_EUNSUPPORTED;
        buf[(*pos)++] = i ? ',' : open;
        int r = mdp_class_desc(core, ids[i], buf + *pos, len - *pos);
        if (r < 0)
            return r;
        *pos += (size_t)r;
    }
    if (*pos + 1 >= len)
        return MDT_EUNSUPPORTED;
    buf[(*pos)++] = close;
    buf[*pos] = 0;
    return 0;
}

char *mdp_escape_name(const char *s)
{
    /* TAB, newline and backslash would break the log's line and field
     * structure: \t, \n, \\ (doc/profile-log.md, "Debug names"). */
    size_t n = 0;
    for (const char *p = s; *p; p++)
        n += (*p == '\t' || *p == '\n' || *p == '\\') ? 2 : 1;
    char *out = malloc(n + 1), *o = out;
    if (!out)
        return NULL;
    for (const char *p = s; *p; p++) {
        if (*p == '\t' || *p == '\n' || *p == '\\') {
            *o++ = '\\';
            *o++ = *p == '\t' ? 't' : *p == '\n' ? 'n' : '\\';
        } else {
            *o++ = *p;
        }
    }
    *o = 0;
    return out;
}

static char *debug_name(mdp_core *core, uintptr_t fn, uint64_t gen)
{
    if (!core->cfg.debug_names)
        return NULL;
    void *tmp = talloc_new(NULL);
    char *name = NULL, *out;
    if (tmp && mdt_idmap_function_name(tmp, &name, core->map, fn, gen, NULL) == 0 && name)
        out = mdp_escape_name(name);
    else
        out = strdup("?");
    talloc_free(tmp);
    return out;
}

/* The function with its module and owning class, in one read of the map
 * (mdt_idmap_function_describe); what the map lacks (the module, the
 * owning class) fetched from the runtime, then read again. A function of
 * no generation (as it is now: a stack snapshot's or an ELT hook's
 * FunctionID) the map does not know is fetched too: ReadyToRun methods
 * are learnt only when named (coreclr/callback.c). 0, or -1 when the
 * incarnation is gone. */
static int describe(mdp_core *core, mdt_idmap_function_desc *d, uintptr_t *args, uint32_t cap,
                    uintptr_t fn, uint64_t gen)
{
    if (mdt_idmap_function_describe(d, args, cap, core->map, fn, gen) != 0) {
        mdt_idmap_function_info fi;
        if (gen || !mdp_ops_live(core) ||
            mdt_idmap_function_fetch(&fi, NULL, 0, core->map, fn) != 0 ||
            mdt_idmap_function_describe(d, args, cap, core->map, fn, 0) != 0)
            return -1;
    }
    if (d->module_gen && (!d->class_id || d->class_gen))
        return 0;
    if (!d->module_gen && mdp_ops_live(core)) {
        mdt_idmap_module_info mi;
        mdt_idmap_module_fetch(&mi, core->map, d->module);
    }
    if (d->class_id && !d->class_gen)
        ensure_class(core, d->class_id, 0);
    return mdt_idmap_function_describe(d, args, cap, core->map, fn, gen) == 0 ? 0 : -1;
}

static int build(mdp_core *core, struct mdp_frame *f, uintptr_t fn, uint64_t gen)
{
    mdt_idmap_function_desc d;
    uintptr_t args[2 * MDP_MAX_TARGS];
    if (describe(core, &d, args, 2 * MDP_MAX_TARGS, fn, gen) != 0)
        return FK_UNLOADED;
    if (d.nargs > MDP_MAX_TARGS || !d.module_gen)
        return FK_NOMVID;
    pthread_mutex_lock(&core->mods_lock);
    struct mdp_module *m = mdp_module_get(core, d.module);
    unsigned flags = m ? m->flags : 0;
    pthread_mutex_unlock(&core->mods_lock);
    if (flags & MDP_MODULE_DYNAMIC)
        return FK_DYNAMIC;
    if (flags & MDP_MODULE_STUBS)
        return FK_STUB;
    if (mvid_zero(d.mvid))
        return FK_NOMVID;

    char buf[4096];
    char mv[33];
    mdp_mvid_hex(mv, d.mvid);
    /* MVID:0xTOKEN (8 digits) */
    memcpy(buf, mv, 32);
    memcpy(buf + 32, ":0x", 3);
    size_t pos = (size_t)(mdp_hex_put(buf + 35, d.token, 8) - buf);
    buf[pos] = '\0';
    if (d.class_id) {
        if (!d.class_gen || d.class_nargs > MDP_MAX_TARGS)
            return FK_NOMVID;
        if (d.class_shape == MDT_IDMAP_SHAPE_TYPEDEF &&
            add_args(core, buf, sizeof buf, &pos, '{', '}', d.class_args, d.class_nargs) != 0)
            return FK_NOMVID;
    }
    if (add_args(core, buf, sizeof buf, &pos, '<', '>', d.args, d.nargs) != 0)
        return FK_NOMVID;
    f->text = strdup(buf);
    f->debug = debug_name(core, fn, gen);
    if (mdp_wall_mode(core)) {
        /* wall mode: whether the method is a wait that names a blocked
         * thread's state (wall.c), once per incarnation */
        void *tmp = talloc_new(NULL);
        char *name = NULL;
        if (tmp && mdt_idmap_function_name(tmp, &name, core->map, fn, gen, NULL) == 0 && name)
            f->wait = mdp_wall_wait_of(name);
        talloc_free(tmp);
    }
    return f->text ? FK_MANAGED : FK_NOMVID;
}

const struct mdp_frame *mdp_frame_get(mdp_core *core, uintptr_t fn, uint64_t gen)
{
    struct mdp_frame *f = mdp_pmap_get(&core->naming->frames, fn, gen);
    if (f)
        return f;
    f = calloc(1, sizeof *f);
    if (!f)
        return NULL;
#ifdef MDP_BENCH_CLOCK
    core->stats.bench_frame_new++;
#endif
    f->kind = build(core, f, fn, gen);
    if (f->kind != FK_MANAGED) {
        free(f->text);
        free(f->debug);
        f->text = strdup(mdp_frame_kind_text[f->kind]);
        f->debug = core->cfg.debug_names ? strdup(mdp_frame_kind_text[f->kind]) : NULL;
    }
    if (!f->text || mdp_pmap_put(&core->naming->frames, fn, gen, f) != 0) {
        free(f->text);
        free(f->debug);
        free(f);
        return NULL;
    }
    return f;
}

/* How many addresses' texts are cached before the cache starts over (each
 * entry is its text, ~50-100 bytes, and a slot of the table: a few MiB at
 * most). A compiler's profile samples ~10,000 addresses. */
#define MDP_IPNAMES_MAX 65536u

const struct mdp_ipname *mdp_frame_at(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen)
{
    struct mdp_naming *nm = core->naming;
    uint64_t epoch = atomic_load_explicit(&nm->code_epoch, memory_order_relaxed);
    if (epoch != nm->ipnames_epoch) {
        /* code was replaced at an address a version had (codemap.c): an
         * address's IL offset may have changed */
        mdp_frames_forget_texts(core);
        nm->ipnames_epoch = epoch;
#ifdef MDP_BENCH_CLOCK
        core->stats.bench_ipname_flush++;
#endif
    }
    struct mdp_ipname *e = mdp_pmap_get(&nm->ipnames, ip, gen);
    if (e && e->fn == fn && e->final)
        return e;
#ifdef MDP_BENCH_CLOCK
    core->stats.bench_ipname_new++;
#endif
    const struct mdp_frame *fr = mdp_frame_get(core, fn, gen);
    if (!fr)
        return NULL;
    char il[24] = "";
    int final = 1;
    if (fr->kind == FK_MANAGED)
        final = mdp_frame_il(core, ip, fn, gen, il, sizeof il);
    size_t tl = strlen(fr->text), il_len = strlen(il);
    struct mdp_ipname *n = malloc(sizeof *n + tl + il_len + 1);
    if (!n)
        return NULL;
    n->fn = fn;
    n->final = final;
    n->kind = fr->kind;
    n->frame = fr;
    n->len = tl + il_len;
    memcpy(n->text, fr->text, tl);
    memcpy(n->text + tl, il, il_len + 1);
    if (nm->ipnames.n >= MDP_IPNAMES_MAX) {
        mdp_frames_forget_texts(core); /* e with the rest */
        e = NULL;
    }
    if (mdp_pmap_put(&nm->ipnames, ip, gen, n) != 0) {
        free(n);
        return NULL;
    }
    free(e); /* replaced: another function's, or one without its IL offset */
    return n;
}

static void free_val(void *payload, mdp_key key, void *val)
{
    free(val);
}

void mdp_frames_forget_texts(mdp_core *core)
{
    mdp_pmap_each(&core->naming->ipnames, free_val, NULL);
    mdp_pmap_free(&core->naming->ipnames);
}

int mdp_frame_classify_ip(mdp_core *core, uintptr_t ip, uintptr_t *fn, uint64_t *gen)
{
    struct mdp_naming *nm = core->naming;
    mdt_idmap_code_range r;
#ifdef MDP_BENCH_CLOCK
    core->stats.bench_classify++;
#endif
    if (mdt_idmap_ip_lookup(&r, core->map, ip) == 0) {
        *fn = r.function_id;
        *gen = r.function_gen;
        return FK_MANAGED;
    }
    uintptr_t k = (uintptr_t)mdp_pmap_get(&nm->ipkinds, ip, 0);
    if (k)
        return (int)k - 1;
    int kind;
    Dl_info di;
    uintptr_t module;
    pthread_mutex_lock(&core->mods_lock);
    int in_image = mdp_exec_module_of(core, ip, &module);
    pthread_mutex_unlock(&core->mods_lock);
    /* a managed image's code (ReadyToRun: most of a compiler's misses) is
     * mapped by the runtime, not the dynamic loader, so dladdr (~1 us a
     * miss, walking the loader's objects) would say no */
    if (!in_image && dladdr((void *)ip, &di) && di.dli_fname) {
        kind = FK_NATIVE;
    } else if (mdp_ops_live(core) && mdt_idmap_ip_fetch(&r, core->map, ip) == 0) {
        *fn = r.function_id;
        *gen = r.function_gen;
        return FK_MANAGED;
    } else {
        kind = FK_STUB;
    }
    if (nm->ipkinds.n > 200000)
        mdp_frames_forget_ips(core);
    mdp_pmap_put(&nm->ipkinds, ip, 0, (void *)(uintptr_t)(kind + 1));
    return kind;
}

int mdp_frame_il(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen, char *buf, size_t len)
{
    buf[0] = 0;
    mdt_idmap_code_range r;
    struct mdp_region reg;
    if (mdt_idmap_ip_lookup(&r, core->map, ip) != 0 || r.function_id != fn ||
        r.function_gen != gen || mdp_code_region_get(core, &r, &reg) != 0)
        return 0; /* the code or its region not (yet) known: ask again later */
    if (ip < reg.start || ip - reg.start >= reg.size)
        return 1;
    const struct mdp_ilmap *m = mdp_code_ilmap(core, &reg);
    if (!m)
        return 1;
    uint64_t off = reg.base + (ip - reg.start);
    /* the last entry starting at or before off */
    size_t lo = 0, hi = m->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (m->e[mid].start <= off)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i-- > 0;) {
        if (m->e[i].end <= off)
            continue;
        uint32_t il = m->e[i].il;
        if (il != MDP_IL_NO_MAPPING && il != MDP_IL_PROLOG && il != MDP_IL_EPILOG && len >= 12) {
            /* "@0x" and at most 8 digits */
            memcpy(buf, "@0x", 3);
            *mdp_hex_put_min(buf + 3, il, 1) = '\0';
        }
        return 1;
    }
    return 1;
}

/* The known wait the first call at or after IL offset `il` (within 16
 * bytes: the map gives the statement's offset, the call may follow its
 * arguments' loads) of method `token` calls. */
static int il_call_wait(const mdt_image *img, uint32_t token, uint32_t il)
{
    mdt_il_body body;
    mdt_il_insn insn;
    if (mdt_il_body_get(&body, img, token) != 0 || il >= body.code_size ||
        mdt_il_insn_at(&insn, &body, il) != 0)
        return 0;
    for (unsigned k = 0; k < 8 && insn.offset < il + 16; k++) {
        if (insn.opcode == MDT_IL_CALL || insn.opcode == MDT_IL_CALLVIRT) {
            char name[512];
            if (mdt_token_name_buf(name, sizeof name, NULL, img, insn.token, NULL) != 0)
                return 0;
            return mdp_wall_wait_of(name);
        }
        if (insn.offset + insn.size >= body.code_size ||
            mdt_il_decode(&insn, &body, insn.offset + insn.size) != 0)
            break;
    }
    return 0;
}

int mdp_frame_call_wait(mdp_core *core, uintptr_t ip, uintptr_t fn, uint64_t gen)
{
    uintptr_t k = (uintptr_t)mdp_pmap_get(&core->naming->wait_sites, ip, gen);
    if (k)
        return (int)k - 1;
    int wait = 0;
    char il[24];
    mdt_idmap_function_info fi;
    uintptr_t margs[MDP_MAX_TARGS];
    mdp_frame_il(core, ip, fn, gen, il, sizeof il);
    if (il[0] && mdt_idmap_function_lookup(&fi, margs, MDP_MAX_TARGS, core->map, fn, gen) == 0) {
        /* the image lives while drain_lock is held: unloads take it */
        pthread_mutex_lock(&core->mods_lock);
        struct mdp_module *m = mdp_module_get(core, fi.module);
        const mdt_image *img = m ? m->image : NULL;
        pthread_mutex_unlock(&core->mods_lock);
        if (img)
            wait = il_call_wait(img, fi.token, (uint32_t)strtoul(il + 3, NULL, 16));
    }
    if (core->naming->wait_sites.n < 100000)
        mdp_pmap_put(&core->naming->wait_sites, ip, gen, (void *)(uintptr_t)(wait + 1));
    return wait;
}

void mdp_frames_forget_ips(mdp_core *core)
{
    mdp_pmap_free(&core->naming->wait_sites);
    mdp_pmap_free(&core->naming->ipkinds);
    mdp_pmap_each(&core->naming->class_texts, free_val, NULL);
    mdp_pmap_free(&core->naming->class_texts);
}

static void free_frame(void *payload, mdp_key key, void *val)
{
    struct mdp_frame *f = val;
    free(f->text);
    free(f->debug);
    free(f);
}

void mdp_frames_free(mdp_core *core)
{
    mdp_pmap_each(&core->naming->frames, free_frame, NULL);
    mdp_pmap_free(&core->naming->frames);
    mdp_frames_forget_ips(core);
    mdp_frames_forget_texts(core);
}

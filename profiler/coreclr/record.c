/* Asking CoreCLR about one ID and sending the core's event: modules
 * (GetModuleInfo2), classes (IsArrayClass, GetClassIDInfo2), functions
 * (GetFunctionInfo2), code (every native code version of a function:
 * GetNativeCodeStartAddresses, then GetCodeInfo4 per version), dynamic
 * methods (GetDynamicFunctionInfo), and the reverse question for a sampled
 * address nobody reported (GetFunctionFromIP3). Used by the callbacks, by
 * the attach catch-up and by the map's miss callback (lazy catch-up, on the
 * drain thread). Never called from the signal handler. */
#include "config.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mdtools/errors.h>

#include "coreclr/clr.h"

#define INFO(p) ((p)->info->lpVtbl)

/* Pseudo modules for code without metadata. */
#define PSEUDO_MODULE_DYNAMIC ((ModuleID)0x11)
#define PSEUDO_MODULE_STUBS ((ModuleID)0x13)

int mdp_clr_module(mdp_clr *p, uint64_t seq, ModuleID module)
{
    const BYTE *base = NULL;
    WCHAR wname[1024];
    ULONG len = 0;
    AssemblyID assembly = 0;
    DWORD flags = 0;
    HRESULT hr = INFO(p)->GetModuleInfo2(p->info, module, &base, sizeof wname / sizeof wname[0],
                                         &len, wname, &assembly, &flags);
    if (FAILED(hr)) {
        mdp_log(p->core, "GetModuleInfo2(%#" PRIxPTR ") failed: %#x", module, (unsigned)hr);
        return MDT_ENOTFOUND;
    }
    char path[4096];
    mdp_utf16_to_utf8(path, sizeof path, wname, len < sizeof wname / sizeof wname[0] ? len : 0);
    mdp_module_desc d = {
        .base = base, .path = path, .flags = 0, .assembly = assembly == 0xFFFFFFFDu ? 0 : assembly};
    if (flags & COR_PRF_MODULE_DYNAMIC)
        d.flags |= MDP_MODULE_DYNAMIC;
    if (flags & COR_PRF_MODULE_FLAT_LAYOUT)
        d.flags |= MDP_MODULE_FLAT;
    if (flags & COR_PRF_MODULE_RESOURCE)
        d.flags |= MDP_MODULE_RESOURCE;
    if (flags & COR_PRF_MODULE_COLLECTIBLE)
        d.flags |= MDP_MODULE_COLLECTIBLE;
    int r = mdp_ev_module_load(p->core, seq, module, &d);
    return r < 0 ? r : 0;
}

int mdp_clr_class(mdp_clr *p, uint64_t seq, ClassID cls)
{
    CorElementType et = 0;
    ClassID elem = 0;
    ULONG rank = 0;
    mdt_idmap_class_info ci;
    memset(&ci, 0, sizeof ci);
    HRESULT hr = INFO(p)->IsArrayClass(p->info, cls, &et, &elem, &rank);
    if (hr == S_OK) {
        /* A rank-1 array here is T[]: the profiling API does not tell T[]
         * from the rarer rank-1 T[*]. */
        ci.shape = rank <= 1 ? MDT_IDMAP_SHAPE_SZARRAY : MDT_IDMAP_SHAPE_ARRAY;
        ci.rank = (uint16_t)(rank > 65535 ? 65535 : rank);
        if (!elem)
            elem = mdp_ev_prim_class(p->core, seq, et);
        if (!elem)
            return MDT_ENOTFOUND;
        ci.nargs = 1;
        ci.args = &elem;
        int r = mdp_ev_class_load(p->core, seq, cls, &ci);
        return r < 0 ? r : 0;
    }
    ModuleID module = 0;
    mdTypeDef td = 0;
    ClassID parent = 0, args[64];
    ULONG32 n = 0;
    hr = INFO(p)->GetClassIDInfo2(p->info, cls, &module, &td, &parent, 64, &n, args);
    if (FAILED(hr)) {
        mdp_log(p->core, "GetClassIDInfo2(%#" PRIxPTR ") failed: %#x", cls, (unsigned)hr);
        return MDT_ENOTFOUND;
    }
    if (n > 64)
        return MDT_EUNSUPPORTED;
    ci.shape = MDT_IDMAP_SHAPE_TYPEDEF;
    ci.module = module;
    ci.token = td;
    ci.nargs = n;
    ci.args = args;
    int r = mdp_ev_class_load(p->core, seq, cls, &ci);
    return r < 0 ? r : 0;
}

int mdp_clr_function(mdp_clr *p, uint64_t seq, FunctionID fn)
{
    ClassID cls = 0, args[64];
    ModuleID module = 0;
    mdToken token = 0;
    ULONG32 n = 0;
    HRESULT hr = INFO(p)->GetFunctionInfo2(p->info, fn, 0, &cls, &module, &token, 64, &n, args);
    /* No metadata: a dynamic method, or an IL stub (a P/Invoke's marshalling
     * stub says the module of the P/Invoke, with a nil MethodDef). Startup
     * learns those from DynamicMethodJITCompilationFinished; an attach's
     * enumeration and a sampled address find them here. */
    if (FAILED(hr) || !module || n > 64 || (token & 0xff000000u) != 0x06000000u ||
        !(token & 0x00ffffffu))
        return mdp_clr_dynamic_function(p, seq, fn);
    mdt_idmap_function_info fi = {
        .module = module, .token = token, .class_id = cls, .nargs = n, .args = args};
    int r = mdp_ev_function_load(p->core, seq, fn, &fi);
    return r < 0 ? r : 0;
}

/* Methods without metadata (LCG DynamicMethods, IL stubs) live in pseudo
 * modules recorded as dynamic or as stubs, so their frames say so. */
int mdp_clr_dynamic_function(mdp_clr *p, uint64_t seq, FunctionID fn)
{
    ModuleID module = 0;
    const BYTE *sig = NULL;
    ULONG siglen = 0, len = 0;
    WCHAR wname[256];
    char name[512] = "";
    if (p->info_level >= 8 && SUCCEEDED(INFO(p)->GetDynamicFunctionInfo(p->info, fn, &module, &sig,
                                                                        &siglen, 256, &len, wname)))
        mdp_utf16_to_utf8(name, sizeof name, wname, len < 256 ? len : 0);
    int stub = strncmp(name, "IL_STUB", 7) == 0 || strncmp(name, "dynamicClass", 12) == 0;
    ModuleID pseudo = stub ? PSEUDO_MODULE_STUBS : PSEUDO_MODULE_DYNAMIC;
    mdp_module_desc d = {.path = stub ? "(runtime stubs)" : "(dynamic methods)",
                         .flags = stub ? MDP_MODULE_STUBS : MDP_MODULE_DYNAMIC};
    mdt_idmap_module_info mi;
    if (mdt_idmap_module_lookup(&mi, mdp_core_map(p->core), pseudo, 0) != 0) {
        MDP_SEQ_HELD(pseudo_seq, p->core);
        mdp_ev_module_load(p->core, pseudo_seq, pseudo, &d);
    }
    mdt_idmap_function_info fi = {.module = pseudo, .token = 0x06000000u};
    int r = mdp_ev_function_load(p->core, seq, fn, &fi);
    return r < 0 ? r : 0;
}

/* Record the code versions of fn that the map does not know yet (a version
 * already there as fn's, or as a pseudo function's named from its image,
 * is not asked about again: the tick retries a function until its new
 * version is published, and a rejit lists every older one too). *fresh
 * gets the number recorded. */
static int clr_code(mdp_clr *p, uint64_t seq, FunctionID fn, unsigned *fresh)
{
    UINT_PTR starts[32];
    ULONG32 ns = 0;
    HRESULT hr = INFO(p)->GetNativeCodeStartAddresses(p->info, fn, 0, 32, &ns, starts);
    int result = 0;
    *fresh = 0;
    if (FAILED(hr))
        ns = 0;
    if (ns > 32)
        ns = 32; /* more code versions than that: the newest are covered lazily */
    for (ULONG32 i = 0; i < ns; i++) {
        mdt_idmap_code_range known;
        if (mdt_idmap_ip_lookup(&known, mdp_core_map(p->core), starts[i]) == 0 &&
            (known.function_id == fn ||
             (MDP_PSEUDO_FUNCTION(known.function_id) && known.start == starts[i])))
            continue; /* known; or ReadyToRun code named from its image (mdp_clr_ip), which
                       * keeps its name: replacing it would only change the FunctionID and
                       * make the drain's texts of every address stale */
        COR_PRF_CODE_INFO ci[8];
        ULONG32 nc = 0;
        if (FAILED(INFO(p)->GetCodeInfo4(p->info, starts[i], 8, &nc, ci)) || nc == 0)
            continue;
        if (nc > 8)
            nc = 8;
        mdp_code_region regions[8];
        for (ULONG32 j = 0; j < nc; j++)
            regions[j] = (mdp_code_region){ci[j].startAddress, ci[j].size};
        int r = mdp_ev_code(p->core, seq, fn, regions, nc);
        if (p->cfg.verbose >= 2)
            mdp_log(p->core,
                    "code of %#" PRIxPTR ": version %u/%u at %#" PRIxPTR "+%#zx (%u regions): %d",
                    fn, i + 1, ns, regions[0].start, regions[0].size, nc, r);
        if (r < 0)
            result = r;
        else
            ++*fresh;
    }
    if (ns == 0) {
        /* Code not published yet at this moment (or a runtime without code
         * versions): the default version's regions. */
        COR_PRF_CODE_INFO ci[8];
        ULONG32 nc = 0;
        if (SUCCEEDED(INFO(p)->GetCodeInfo2(p->info, fn, 8, &nc, ci)) && nc > 0) {
            if (nc > 8)
                nc = 8;
            mdp_code_region regions[8];
            for (ULONG32 j = 0; j < nc; j++)
                regions[j] = (mdp_code_region){ci[j].startAddress, ci[j].size};
            result = mdp_ev_code(p->core, seq, fn, regions, nc);
            *fresh = result >= 0;
        } else {
            result = MDT_ENOTFOUND;
        }
    }
    return result;
}

int mdp_clr_code(mdp_clr *p, uint64_t seq, FunctionID fn)
{
    unsigned fresh;
    return clr_code(p, seq, fn, &fresh);
}

unsigned mdp_clr_code_fresh(mdp_clr *p, uint64_t seq, FunctionID fn)
{
    unsigned fresh;
    clr_code(p, seq, fn, &fresh);
    return fresh;
}

static uint64_t thread_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The runtime's answer for ip: its function, that function's code. */
static int runtime_ip(mdp_clr *p, uintptr_t ip)
{
    FunctionID fn = 0;
    ReJITID rejit = 0;
    HRESULT hr = INFO(p)->GetFunctionFromIP3(p->info, (const BYTE *)ip, &fn, &rejit);
    if (FAILED(hr) || !fn)
        return MDT_ENOTFOUND;
    MDP_SEQ_HELD(seq, p->core);
    int r = mdp_clr_function(p, seq, fn);
    if (r == 0)
        r = mdp_clr_code(p, seq, fn);
    mdt_idmap_code_range cr;
    if (mdt_idmap_ip_lookup(&cr, mdp_core_map(p->core), ip) != 0) {
        mdp_log(p->core,
                "ip %#" PRIxPTR " is in function %#" PRIxPTR
                " but in none of its listed code versions",
                ip, fn);
        return MDT_ENOTFOUND;
    }
    return 0;
}

/* A sampled address nobody reported. In a module's ReadyToRun code, a
 * non-generic method may be named from the image (mdp_code_r2r_name) with
 * a pseudo FunctionID the runtime never sees; anything else, or any
 * failure there, asks the runtime. Only with r2rnames=image: measured on a
 * `dotnet build`, it costs more than it saves (bench/profiler/README.md,
 * branch r2rtok: opening the entry points ~5 ms a process, and a naming
 * ~6 us either way, of which the runtime's calls are ~2.5 us), so the
 * runtime names them by default. ilmaps=check asks both and compares (the
 * runtime's answer is kept). */
int mdp_clr_ip(mdp_clr *p, uintptr_t ip)
{
    int mode = p->cfg.ilmaps == MDP_ILMAPS_CHECK       ? MDP_ILMAPS_CHECK
               : p->cfg.r2rnames == MDP_R2RNAMES_IMAGE ? MDP_ILMAPS_IMAGE
                                                       : MDP_ILMAPS_RUNTIME;
    if (mode == MDP_ILMAPS_RUNTIME) {
        /* the default: counted, not timed. The thread's CPU clock is a
         * system call (~0.5 us on a VM): three a naming were ~1.7 us of
         * the ~9 one took in a compiler's process (bench/profiler/
         * README.md, "the drain per new deep stack"). The times are for
         * comparing the two ways, which the other modes do. */
        int r = runtime_ip(p, ip);
        if (r == 0)
            mdp_code_r2r_runtime(p->core, ip, 0, NULL, 0);
        return r;
    }
    mdp_r2r_name img;
    uint64_t t0 = thread_ns(), t_img = 0;
    int have = mdp_code_r2r_name(p->core, ip, &img) == 0;
    if (have && mode == MDP_ILMAPS_IMAGE) {
        MDP_SEQ_HELD(seq, p->core);
        if (mdp_code_r2r_enter(p->core, seq, &img, t0) == 0)
            return 0;
    }
    if (have)
        t_img = thread_ns() - t0;
    uint64_t t1 = thread_ns();
    int r = runtime_ip(p, ip);
    if (r == 0 || have)
        mdp_code_r2r_runtime(p->core, ip, thread_ns() - t1,
                             have && mode == MDP_ILMAPS_CHECK ? &img : NULL, t_img);
    return r;
}

/* ---- the core's questions (drain thread) --------------------------------- */

static int ops_miss(void *payload, int kind, uintptr_t id)
{
    mdp_clr *p = payload;
    if (atomic_load(&p->shut_down))
        return MDT_ENOTFOUND;
    MDP_SEQ_HELD(seq, p->core);
    switch (kind) {
    case MDT_IDMAP_MODULE: return mdp_clr_module(p, seq, id);
    case MDT_IDMAP_CLASS:
        if (id < 4096) /* a pseudo ID of the core, never the runtime's */
            return MDT_ENOTFOUND;
        return mdp_clr_class(p, seq, id);
    case MDT_IDMAP_FUNCTION:
        if (MDP_PSEUDO_FUNCTION(id)) /* the core's, named from an image: never the runtime's */
            return MDT_ENOTFOUND;
        return mdp_clr_function(p, seq, id);
    case MDT_IDMAP_IP: return mdp_clr_ip(p, id);
    default: return MDT_ENOTFOUND;
    }
}

static int ops_il_map(void *payload, uintptr_t code_start, struct mdp_il_entry *out, size_t cap)
{
    mdp_clr *p = payload;
    if (atomic_load(&p->shut_down))
        return -1;
    enum { CHUNK = 256 };
    COR_DEBUG_IL_TO_NATIVE_MAP m[CHUNK];
    ULONG32 n = 0;
    HRESULT hr = INFO(p)->GetILToNativeMapping3(p->info, code_start, CHUNK, &n, m);
    if (FAILED(hr))
        return -1;
    if (n > CHUNK) {
        /* larger than the stack buffer: ask again into a heap one */
        COR_DEBUG_IL_TO_NATIVE_MAP *big = malloc(n * sizeof *big);
        ULONG32 n2 = 0;
        if (!big)
            return -1;
        if (FAILED(INFO(p)->GetILToNativeMapping3(p->info, code_start, n, &n2, big)) || n2 > n) {
            free(big);
            return -1;
        }
        for (ULONG32 i = 0; i < n2 && i < cap; i++)
            out[i] = (struct mdp_il_entry){big[i].ilOffset, big[i].nativeStartOffset,
                                           big[i].nativeEndOffset};
        free(big);
        return (int)n2;
    }
    for (ULONG32 i = 0; i < n && i < cap; i++)
        out[i] = (struct mdp_il_entry){m[i].ilOffset, m[i].nativeStartOffset, m[i].nativeEndOffset};
    return (int)n;
}

void mdp_clr_defer_code(mdp_clr *p, FunctionID fn, uint64_t seq, unsigned tries)
{
    pthread_mutex_lock(&p->pending_lock);
    if (p->npending == p->pending_cap) {
        size_t cap = p->pending_cap ? p->pending_cap * 2 : 256;
        struct mdp_pending *v = realloc(p->pending, cap * sizeof *v);
        if (!v) {
            pthread_mutex_unlock(&p->pending_lock);
            return; /* its samples are then named through the miss callback */
        }
        p->pending = v;
        p->pending_cap = cap;
    }
    p->pending[p->npending++] = (struct mdp_pending){fn, seq, tries};
    pthread_mutex_unlock(&p->pending_lock);
    mdp_core_drain_soon(p->core); /* the next tick soon, whatever the drain's period */
}

/* The drain thread's tick: record the code of functions JIT-compiled since
 * the last one (the runtime publishes a version after its
 * JITCompilationFinished returns, so the callback only lists the function).
 * Retried at the next ticks while no new version shows up (a few tries),
 * then the miss callback is left to find what is still missing when a
 * sample lands in it. Then the map's tombstones are retired below every
 * seq still in use, the deferred ones included. */
static void ops_tick(void *payload)
{
    mdp_clr *p = payload;
    if (atomic_load(&p->shut_down))
        return;
    if (p->cfg.modes & MDP_MODE_HEAP)
        mdp_clr_heap_tick(p); /* heap.c: a walk after a gen2 GC */
    pthread_mutex_lock(&p->pending_lock);
    struct mdp_pending *v = p->pending;
    size_t n = p->npending;
    p->pending = NULL;
    p->npending = p->pending_cap = 0;
    pthread_mutex_unlock(&p->pending_lock);
    for (size_t i = 0; i < n; i++) {
        unsigned fresh = 0;
        clr_code(p, v[i].seq, v[i].fn, &fresh);
        if (!fresh && v[i].tries < 5)
            mdp_clr_defer_code(p, v[i].fn, v[i].seq, v[i].tries + 1);
    }
    free(v);
    uint64_t floor = 0;
    pthread_mutex_lock(&p->pending_lock);
    for (size_t i = 0; i < p->npending; i++)
        if (!floor || p->pending[i].seq < floor)
            floor = p->pending[i].seq;
    pthread_mutex_unlock(&p->pending_lock);
    int r = mdp_core_retire(p->core, floor, 0);
    if (r != 0)
        mdp_log(p->core, "retired below the oldest seq in use: %d", r);
}

static void ops_done(void *payload)
{
    mdp_clr *p = payload;
    if (p->attach && p->info_level >= 3 && !atomic_load(&p->shut_down)) {
        /* An attached session that ended: leave the process. The runtime
         * waits at least this long (it clamps it to 300 ms) before it
         * checks that no thread is inside the profiler; then
         * ProfilerDetachSucceeded (startup.c) frees the core. */
        HRESULT hr = INFO(p)->RequestProfilerDetach(p->info, 300);
        if (FAILED(hr))
            mdp_note(p->core, "the runtime refused to detach the profiler: HRESULT %#x",
                     (unsigned)hr);
    }
}

const mdp_runtime_ops mdp_clr_ops = {
    .miss = ops_miss, .il_map = ops_il_map, .tick = ops_tick, .done = ops_done};

/* What the log says about the process and its modules
 * (doc/profile-log.md): the header line (runtime, pid, ppid, mode, start,
 * the core library's folder `framework=`, every shared-framework, SDK and
 * pack folder managed modules came from `frameworks=`, every other such
 * folder `folders=`, the single-file bundle the modules of relative paths
 * came from `bundles=`, the command line `cmd=`; a reader searches them
 * for the records' modules), the `#frameworks`, `#folders` and `#bundles`
 * lines of those first seen after the header, and the text of a
 * `#module MVID NAME VERSION` line, which tells a reader which assembly
 * (and version) to look for when it does not find a module by its MVID.
 * Header values hold no spaces: spaces, control characters and '%' are
 * percent-encoded. */
#define _GNU_SOURCE
#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/base.h"
#include "core/channel.h"
#include "core/growbuf.h"
#include "core/sampler.h"
#include "core/naming.h"
#include "core/modes.h"
#include "core/log.h"
#include "core/log_state.h"

/* The last components of a folder: is it …/shared/NAME/VERSION, a folder
 * in …/sdk/VERSION…, or one in a pack of the install, …/packs/NAME/VERSION…
 * (the targeting packs' source generators, which the compiler of a
 * `dotnet build` loads)? A VERSION starts with a digit. */
int mdp_framework_folder(const char *dir, size_t len)
{
    const char *comp[64];
    size_t clen[64], n = 0;
    for (size_t i = 0; i < len && n < 64;) {
        while (i < len && dir[i] == '/')
            i++;
        size_t j = i;
        while (j < len && dir[j] != '/')
            j++;
        if (j > i) {
            comp[n] = dir + i;
            clen[n++] = j - i;
        }
        i = j;
    }
    if (n >= 3 && clen[n - 3] == 6 && memcmp(comp[n - 3], "shared", 6) == 0 &&
        comp[n - 1][0] >= '0' && comp[n - 1][0] <= '9')
        return 1;
    for (size_t k = 0; k + 1 < n; k++)
        if (clen[k] == 3 && memcmp(comp[k], "sdk", 3) == 0 && comp[k + 1][0] >= '0' &&
            comp[k + 1][0] <= '9')
            return 1;
    for (size_t k = 0; k + 2 < n; k++)
        if (clen[k] == 5 && memcmp(comp[k], "packs", 5) == 0 && comp[k + 2][0] >= '0' &&
            comp[k + 2][0] <= '9')
            return 1;
    return 0;
}

/* The folder the core library was loaded from (the shared framework's
 * Microsoft.NETCore.App/VERSION, or the application's own folder when it is
 * self-contained): the log's header names it, so that the log says which
 * folder to resolve framework frames against. The first one wins (there is
 * one core library a process). mods_lock held. */
void mdp_corelib_note(mdp_core *core, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (core->writer->framework[0] || n == 0 || n >= sizeof core->writer->framework)
        return;
    memcpy(core->writer->framework, path, n);
    core->writer->framework[n] = 0;
}

/* The executable, as the bundle modules with a relative path came from:
 * the runtime names a single-file app's bundled assemblies by their path
 * in the bundle ("App.dll"). Looked up once (a system call), written as
 * the header's bundles=; a reader checks that it is one. */
static void bundle_note(mdp_core *core)
{
    struct mdp_folders *l = &core->writer->bundles;
    char exe[4096];
    if (l->n || core->writer->bundle_tried)
        return;
    core->writer->bundle_tried = 1;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0 || exe[0] != '/')
        return;
    exe[n] = 0;
    char *d = strdup(exe);
    if (d)
        l->v[l->n++] = d;
}

void mdp_folders_note(mdp_core *core, const char *path)
{
    const char *slash = strrchr(path, '/');
    if (path[0] && path[0] != '/') {
        bundle_note(core);
        return;
    }
    if (!slash || slash == path)
        return;
    size_t n = (size_t)(slash - path);
    struct mdp_folders *l =
        mdp_framework_folder(path, n) ? &core->writer->frameworks : &core->writer->apps;
    for (size_t i = 0; i < l->n; i++)
        if (strlen(l->v[i]) == n && memcmp(l->v[i], path, n) == 0)
            return;
    if (l->n == MDP_MAX_FOLDERS)
        return; /* a reader is given folders as hints: the rest need -a */
    char *d = strndup(path, n);
    if (d)
        l->v[l->n++] = d;
}

/* Folders [from, l->n) of a list, comma-separated and encoded, after `lead`. */
static void put_folders(struct mdp_growbuf *b, const char *lead, const struct mdp_folders *l,
                        size_t from)
{
    char enc[3 * 4200 + 1];
    mdp_growbuf_puts(b, lead);
    for (size_t i = from; i < l->n; i++) {
        size_t n = mdp_pct_escape(enc, sizeof enc, l->v[i], strlen(l->v[i]));
        if (i > from)
            mdp_growbuf_put(b, ",", 1);
        mdp_growbuf_put(b, enc, n);
    }
}

char *mdp_folders_announce(mdp_core *core, size_t *len)
{
    struct mdp_growbuf b = {0};
    struct mdp_folders *lists[3] = {&core->writer->frameworks, &core->writer->apps,
                                    &core->writer->bundles};
    static const char *const lead[3] = {"#frameworks ", "#folders ", "#bundles "};
    *len = 0;
    pthread_mutex_lock(&core->mods_lock);
    for (int k = 0; k < 3; k++) {
        lists[k]->announced = lists[k]->n;
        if (lists[k]->n > lists[k]->written) {
            put_folders(&b, lead[k], lists[k], lists[k]->written);
            mdp_growbuf_put(&b, "\n", 1);
        }
    }
    pthread_mutex_unlock(&core->mods_lock);
    if (b.bad) {
        free(b.s);
        return NULL; /* said at the next write */
    }
    *len = b.len;
    return b.s;
}

void mdp_folders_announced(mdp_core *core, int written)
{
    pthread_mutex_lock(&core->mods_lock);
    if (written) {
        core->writer->frameworks.written = core->writer->frameworks.announced;
        core->writer->apps.written = core->writer->apps.announced;
        core->writer->bundles.written = core->writer->bundles.announced;
    }
    pthread_mutex_unlock(&core->mods_lock);
}

void mdp_folders_free(mdp_core *core)
{
    struct mdp_folders *lists[3] = {&core->writer->frameworks, &core->writer->apps,
                                    &core->writer->bundles};
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < lists[k]->n; i++)
            free(lists[k]->v[i]);
}

/* Short names for the header's many appends. */
static void put(struct mdp_growbuf *b, const char *s, size_t n)
{
    mdp_growbuf_put(b, s, n);
}

static void puts_(struct mdp_growbuf *b, const char *s)
{
    mdp_growbuf_puts(b, s);
}

static void put_enc(struct mdp_growbuf *b, const char *s)
{
    char enc[3 * 4200 + 1];
    size_t n = mdp_pct_escape(enc, sizeof enc, s, strlen(s));
    put(b, enc, n);
}

char *mdp_header_line(mdp_core *core)
{
    struct mdp_growbuf b = {0};
    char tmp[160], when[32];
    struct tm tm;
    gmtime_r(&core->writer->start_wall, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    unsigned modes = core->cfg.modes;
    char mode_list[96];
    if (mdp_mode_format(modes, mode_list, sizeof mode_list) < 0)
        snprintf(mode_list, sizeof mode_list, "unknown");
    /* the format says what the log may hold beyond format 1
     * (doc/profile-log.md): 2, call records with exits; 3, native frames
     * with their ELF file; 4, records with their thread and time slice,
     * and #thread lines; a log of alloc alone holds neither: the highest of the kinds the
     * modes write (mdp_rec_kinds, records.c) */
    int stacks = (modes & MDP_MODE_ALLOC) && core->allocstack, format = 1;
    for (unsigned k = 0; k < MDP_REC_NKINDS; k++)
        if ((modes & mdp_rec_kinds[k].modes) && (k != MDP_REC_ASTACK || stacks) &&
            (int)mdp_rec_kinds[k].format > format)
            format = (int)mdp_rec_kinds[k].format;
    snprintf(tmp, sizeof tmp, "#mdprofile %d runtime=%s pid=%d ppid=%d mode=", format,
             core->writer->runtime[0] ? core->writer->runtime : "unknown", core->pid, core->ppid);
    puts_(&b, tmp);
    puts_(&b, mode_list);
    if (modes & (MDP_MODE_SAMPLE | MDP_MODE_WALL)) {
        snprintf(tmp, sizeof tmp, " rate=%u slice=%u", core->cfg.rate, core->cfg.slice_ms);
        puts_(&b, tmp);
    } else if ((modes & (MDP_MODE_EXCEPTIONS | MDP_MODE_CONTENTION)) || stacks) {
        /* throw, wait and astack records carry their thread and slice too */
        snprintf(tmp, sizeof tmp, " slice=%u", core->cfg.slice_ms);
        puts_(&b, tmp);
    }
    if (stacks && mdp_alloc_stacks_describe(core, tmp, sizeof tmp) > 0)
        /* astack records: one sampled allocation per this many bytes on
         * average, which path, how weighted (allocstack.c) */
        puts_(&b, tmp);
    puts_(&b, " start=");
    puts_(&b, when);
    if (core->writer->attach)
        puts_(&b, " attach=1");
    if (modes & MDP_MODE_SAMPLE) {
        /* CPU time; cpu_clock= says what signalled it (perfclock.c) */
        puts_(&b, " clock=cpu cpu_clock=");
        puts_(&b, mdp_perf_clock_name(core));
    }
    if (mdp_wall_mode(core)) {
        /* wall time, each thread signalled within the budget (wall.c) */
        snprintf(tmp, sizeof tmp, " clock=wall budget=%u",
                 core->cfg.wall_budget ? core->cfg.wall_budget : MDP_WALL_BUDGET);
        puts_(&b, tmp);
    }
    pthread_mutex_lock(&core->mods_lock);
    if (core->writer->framework[0]) {
        puts_(&b, " framework=");
        put_enc(&b, core->writer->framework);
    }
    if (core->writer->frameworks.n)
        put_folders(&b, " frameworks=", &core->writer->frameworks, 0);
    if (core->writer->apps.n)
        put_folders(&b, " folders=", &core->writer->apps, 0);
    if (core->writer->bundles.n)
        put_folders(&b, " bundles=", &core->writer->bundles, 0);
    core->writer->frameworks.written = core->writer->frameworks.announced =
        core->writer->frameworks.n;
    core->writer->apps.written = core->writer->apps.announced = core->writer->apps.n;
    core->writer->bundles.written = core->writer->bundles.announced = core->writer->bundles.n;
    pthread_mutex_unlock(&core->mods_lock);
    if (core->cmd[0]) {
        puts_(&b, " cmd=");
        puts_(&b, core->cmd);
    }
    if (b.bad) {
        free(b.s);
        return NULL;
    }
    return b.s;
}

static int hexeq(const uint8_t mvid[16], const char *hex)
{
    char h[33];
    mdp_mvid_hex(h, mvid);
    return memcmp(h, hex, 32) == 0;
}

struct find {
    const char *hex;
    const struct mdp_module *m;
};

static void find_one(void *payload, mdp_key key, void *val)
{
    struct find *f = payload;
    const struct mdp_module *m = val;
    if (!f->m && hexeq(m->mvid, f->hex))
        f->m = m;
}

int mdp_module_describe(mdp_core *core, const char *mvid, char *out, size_t cap)
{
    struct find f = {mvid, NULL};
    int r = -1;
    pthread_mutex_lock(&core->mods_lock);
    mdp_pmap_each(&core->modules, find_one, &f);
    for (size_t i = 0; !f.m && i < core->ngraveyard; i++)
        find_one(&f, (mdp_key){0, 0}, core->graveyard[i]);
    if (f.m) {
        char name[512];
        uint16_t v[4] = {0, 0, 0, 0};
        if (f.m->name && f.m->name[0]) {
            mdp_pct_escape(name, sizeof name, f.m->name, strlen(f.m->name));
            memcpy(v, f.m->version, sizeof v);
        } else {
            /* a module without an assembly manifest: its file's name */
            const char *base = strrchr(f.m->path, '/');
            base = base ? base + 1 : f.m->path;
            const char *dot = strrchr(base, '.');
            size_t n = dot && dot != base ? (size_t)(dot - base) : strlen(base);
            mdp_pct_escape(name, sizeof name, base, n);
            if (!name[0])
                snprintf(name, sizeof name, "?");
        }
        snprintf(out, cap, "%s %u.%u.%u.%u", name, v[0], v[1], v[2], v[3]);
        r = 0;
    }
    pthread_mutex_unlock(&core->mods_lock);
    return r;
}

void mdp_read_cmdline(char *out, size_t cap)
{
    out[0] = 0;
    if (cap < 8)
        return;
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    char raw[4096];
    size_t n = 0;
    ssize_t r;
    while (n < sizeof raw && (r = read(fd, raw + n, sizeof raw - n)) > 0)
        n += (size_t)r;
    close(fd);
    while (n && raw[n - 1] == 0)
        n--;
    /* arguments are separated by a space (%20 in the encoded text) */
    for (size_t i = 0; i < n; i++)
        if (raw[i] == 0)
            raw[i] = ' ';
    size_t len = mdp_pct_escape(out, cap, raw, n);
    char check[3 * sizeof raw];
    if (mdp_pct_escape(check, sizeof check, raw, n) > len || n == sizeof raw) {
        /* cut: end with "..." at an escape boundary */
        while (len > 0 && len + 3 >= cap)
            len--;
        while (len > 0 && (out[len - 1] == '%' || (len > 1 && out[len - 2] == '%')))
            len--;
        memcpy(out + len, "...", 4);
    }
}

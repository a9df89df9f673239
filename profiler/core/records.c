/* Aggregated records and the log writer (doc/profile-log.md).
 *
 * Records are keyed by their frames' text; the writer sorts them by count
 * (then text, so equal runs give equal logs), writes the header, one line
 * per record with the in-process names after a TAB when --debug-names is
 * on, and the closing #stats line. A calls-mode log is format 2 (its call
 * records carry their leaves, tail calls and unwinds), a sample log format
 * 3 (native frames name their ELF file, after its `#elf` line: elfmap.c);
 * an alloc log holds nothing either added and says format 1. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/core_int.h"
#include "core/native.h"

struct mdp_record *mdp_record_add(mdp_core *core, const char *key, size_t keylen, uint64_t count,
                                  uint64_t bytes, const char *debug)
{
    struct mdp_record *r = mdp_smap_get(&core->records, key, keylen);
    if (!r) {
        r = calloc(1, sizeof *r);
        if (!r)
            return NULL;
        if (debug && !(r->debug = strdup(debug))) {
            free(r);
            return NULL;
        }
        if (mdp_smap_put(&core->records, key, keylen, r) != 0) {
            free(r->debug);
            free(r);
            return NULL;
        }
    }
    r->count += count;
    r->bytes += bytes;
    return r;
}

struct rec_ref {
    const char *key;
    struct mdp_record *rec;
};

struct collect {
    struct rec_ref *v;
    size_t n;
};

static void collect_one(void *payload, const char *key, void *val)
{
    struct collect *c = payload;
    c->v[c->n++] = (struct rec_ref){key, val};
}

static int by_count(const void *a, const void *b)
{
    const struct rec_ref *x = a, *y = b;
    if (x->rec->count != y->rec->count)
        return x->rec->count > y->rec->count ? -1 : 1;
    return strcmp(x->key, y->key);
}

static const char *const mode_names[] = {"sample", "calls", "alloc"};
static const char *const record_kinds[] = {"stack", "call", "alloc"};

int mdp_log_write(mdp_core *core)
{
    char path[4200];
    if (core->cfg.output[0])
        snprintf(path, sizeof path, "%s", core->cfg.output);
    else
        snprintf(path, sizeof path, "mdprofile.%d.log", core->pid);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) {
        fprintf(stderr, "mdprofile: cannot write the log %s: %s\n", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    char when[32];
    struct tm tm;
    gmtime_r(&core->start_wall, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int mode = core->cfg.mode;
    /* format 2: call records with exits; 3: native frames with their ELF
     * file (sample logs); alloc logs hold nothing either added */
    fprintf(f, "#mdprofile %d runtime=%s pid=%d mode=%s",
            mode == MDP_MODE_CALLS ? 2 : mode == MDP_MODE_SAMPLE ? 3 : 1,
            core->runtime[0] ? core->runtime : "unknown", core->pid, mode_names[mode]);
    if (mode == MDP_MODE_SAMPLE)
        fprintf(f, " rate=%u", core->cfg.rate);
    fprintf(f, " start=%s", when);
    if (core->attach)
        fprintf(f, " attach=1");
    if (mode == MDP_MODE_SAMPLE)
        fprintf(f, " clock=cpu");
    pthread_mutex_lock(&core->mods_lock);
    if (core->framework[0]) {
        /* a header value holds no space: percent-encode spaces, controls
         * and '%' itself (doc/profile-log.md) */
        fputs(" framework=", f);
        for (const unsigned char *c = (const unsigned char *)core->framework; *c; c++)
            if (*c <= 0x20 || *c == 0x7f || *c == '%')
                fprintf(f, "%%%02X", *c);
            else
                fputc(*c, f);
    }
    pthread_mutex_unlock(&core->mods_lock);
    fputc('\n', f);
    mdp_elf_announce(core, f); /* the files of the native frames below */

    struct collect c = {calloc(core->records.n ? core->records.n : 1, sizeof *c.v), 0};
    if (!c.v) {
        fclose(f);
        return -1;
    }
    mdp_smap_each(&core->records, collect_one, &c);
    qsort(c.v, c.n, sizeof *c.v, by_count);
    uint64_t frames = 0;
    for (size_t i = 0; i < c.n; i++) {
        const struct mdp_record *r = c.v[i].rec;
        fprintf(f, "%s %" PRIu64, record_kinds[mode], r->count);
        if (mode == MDP_MODE_ALLOC)
            fprintf(f, " %" PRIu64, r->bytes);
        if (mode == MDP_MODE_CALLS)
            fprintf(f, " %" PRIu64 " %" PRIu64 " %" PRIu64, r->exits[0], r->exits[1],
                    r->exits[2] - r->caught);
        fprintf(f, " %s", c.v[i].key);
        if (core->cfg.debug_names && r->debug)
            fprintf(f, "\t%s", r->debug);
        fputc('\n', f);
        frames++;
    }
    free(c.v);

    uint64_t drops = 0;
    if (core->slots)
        for (unsigned i = 0; i < MDP_MAX_THREADS; i++)
            drops += atomic_load(&core->slots[i].drops);
    drops += core->stat_drops_other;
    const uint64_t *k = core->stat_kind;
    uint64_t unknown = k[FK_UNMAPPED] + k[FK_UNLOADED] + k[FK_NOMVID];
    fprintf(f,
            "#stats samples=%" PRIu64 " records=%zu frames=%" PRIu64 " managed=%" PRIu64
            " native=%" PRIu64 " dynamic=%" PRIu64 " stub=%" PRIu64 " unknown=%" PRIu64
            " unknown.unmapped=%" PRIu64 " unknown.unloaded=%" PRIu64 " unknown.nomvid=%" PRIu64
            " drops=%" PRIu64 " threads=%" PRIu64 " duration_ms=%" PRIu64 " signals=%" PRIu64 " late=%" PRIu64
            " unwalked=%" PRIu64 " drains=%u",
            core->stat_samples, c.n, core->stat_frames, k[FK_MANAGED], k[FK_NATIVE],
            k[FK_DYNAMIC], k[FK_STUB], unknown, k[FK_UNMAPPED], k[FK_UNLOADED], k[FK_NOMVID],
            drops, (uint64_t)atomic_load(&core->threads_seen), mdp_elapsed_ms(core),
            core->stat_signals, core->stat_late, core->stat_unwalked, core->drain_cycles);
    mdp_native_stats(core, f);
    fputc('\n', f);
    (void)frames;
    if (fclose(f) != 0) {
        fprintf(stderr, "mdprofile: cannot write the log %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (core->cfg.verbose)
        fprintf(stderr, "mdprofile: wrote %s (%zu records)\n", path, c.n);
    return 0;
}

static void free_record(void *payload, const char *key, void *val)
{
    struct mdp_record *r = val;
    free(r->debug);
    free(r);
}

void mdp_records_free(mdp_core *core)
{
    mdp_smap_each(&core->records, free_record, NULL);
    mdp_smap_free(&core->records);
}

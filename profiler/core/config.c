/* Profiler settings: defaults, the MDPROFILE_* environment variables that
 * `mdprofile` sets for a profiler loaded at startup, and the "key=value;..."
 * text that `mdprofile --attach` passes as the attach request's client data.
 * One table of keys serves both. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"

const char *mdp_clock_setting(int clock)
{
    switch (clock) {
    case MDP_CLOCK_PERF: return "perf";
    case MDP_CLOCK_TIMER: return "timer";
    case MDP_CLOCK_ADAPTIVE: return "adaptive";
    default: return "auto";
    }
}

void mdp_config_default(mdp_config *cfg)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->modes = MDP_MODE_SAMPLE;
    cfg->rate = 1000;
    cfg->slice_ms = 1000;
    cfg->max_depth = 255;
    cfg->drain_ms = 20;
    cfg->flush_ms = 2000;
    cfg->activities = 1;
    cfg->all_threads = 1;
    cfg->wall_budget = MDP_WALL_BUDGET;
    cfg->alloc_sample = 512 * 1024; /* AllocationTick's order: 100 KB */
    /* adaptive by default: every thread starts on the CPU-time timer, since
     * a perf clock's signal is an interrupt of its own, 24-33 us on a VM,
     * so a true 1 kHz costs 4-9% there (bench/profiler/README.md); only a
     * thread the timer serves badly moves to perf. --clock auto or perf
     * asks for the rate, --clock timer for the timer alone */
    cfg->clock = MDP_CLOCK_ADAPTIVE;
    /* the runtime names missed ReadyToRun methods: from the image was
     * slower on a `dotnet build` (bench/profiler/README.md, issue 24) */
    cfg->r2rnames = MDP_R2RNAMES_RUNTIME;
}

/* In the order of enum mdp_mode's bits. */
static const char *const mode_names[] = {"sample", "calls",      "alloc", "exceptions",
                                         "wall",   "contention", "heap"};
#define NMODE_NAMES (sizeof mode_names / sizeof mode_names[0])

int mdp_mode_parse(const char *text, size_t len, unsigned *modes, char *err, size_t errlen)
{
    unsigned set = 0;
    size_t i = 0;
    while (i <= len) {
        size_t j = i;
        while (j < len && text[j] != ',')
            j++;
        size_t n = j - i;
        unsigned bit = 0;
        for (unsigned k = 0; k < NMODE_NAMES; k++)
            if (strlen(mode_names[k]) == n && memcmp(text + i, mode_names[k], n) == 0)
                bit = 1u << k;
        if (!bit) {
            snprintf(
                err, errlen,
                "unknown mode '%.*s' (sample, calls, alloc, exceptions, wall, contention, heap)",
                (int)(n > 60 ? 60 : n), text + i);
            return -1;
        }
        if (!(bit & MDP_MODES_BUILT)) {
            snprintf(err, errlen, "mode %.*s is not built yet", (int)n, text + i);
            return -1;
        }
        set |= bit;
        i = j + 1;
    }
    if ((set & MDP_MODE_SAMPLE) && (set & MDP_MODE_WALL)) {
        snprintf(err, errlen,
                 "modes sample and wall exclude each other: a thread has one sampling timer");
        return -1;
    }
    if ((set & MDP_MODE_CALLS) && set != MDP_MODE_CALLS) {
        snprintf(err, errlen,
                 "mode calls runs alone: its enter hooks would dwarf what the other modes measure");
        return -1;
    }
    *modes = set;
    return 0;
}

int mdp_mode_format(unsigned modes, char *buf, size_t len)
{
    size_t n = 0;
    if (len == 0)
        return -1;
    buf[0] = 0;
    for (unsigned k = 0; k < NMODE_NAMES; k++) {
        if (!(modes & (1u << k)))
            continue;
        size_t w = strlen(mode_names[k]);
        if (n + (n > 0) + w >= len)
            return -1;
        if (n > 0)
            buf[n++] = ',';
        memcpy(buf + n, mode_names[k], w + 1);
        n += w;
    }
    return (int)n;
}

static int parse_uint(const char *v, size_t len, unsigned lo, unsigned hi, unsigned *out)
{
    char buf[32];
    if (len == 0 || len >= sizeof buf)
        return -1;
    memcpy(buf, v, len);
    buf[len] = 0;
    char *end;
    errno = 0;
    unsigned long x = strtoul(buf, &end, 10);
    if (errno || *end || buf[0] == '-' || x < lo || x > hi)
        return -1;
    *out = (unsigned)x;
    return 0;
}

static int is(const char *v, size_t len, const char *word)
{
    return strlen(word) == len && memcmp(v, word, len) == 0;
}

/* Apply one setting; `key` is the lower-case key. */
static int set(mdp_config *cfg, const char *key, const char *v, size_t len, char *err,
               size_t errlen)
{
    unsigned u;
    if (strcmp(key, "mode") == 0) {
        return mdp_mode_parse(v, len, &cfg->modes, err, errlen);
    } else if (strcmp(key, "rate") == 0) {
        if (parse_uint(v, len, 1, 100000, &cfg->rate))
            goto bad;
    } else if (strcmp(key, "slice") == 0) {
        /* a record's time slice: 1 ms to a day */
        if (parse_uint(v, len, 1, 86400000, &cfg->slice_ms))
            goto bad;
    } else if (strcmp(key, "depth") == 0) {
        if (parse_uint(v, len, 1, 255, &cfg->max_depth))
            goto bad;
    } else if (strcmp(key, "output") == 0) {
        if (len >= sizeof cfg->output)
            goto bad;
        memcpy(cfg->output, v, len);
        cfg->output[len] = 0;
    } else if (strcmp(key, "debug_names") == 0) {
        if (parse_uint(v, len, 0, 1, &u))
            goto bad;
        cfg->debug_names = (int)u;
    } else if (strcmp(key, "duration") == 0) {
        if (parse_uint(v, len, 0, 86400000, &cfg->duration_ms))
            goto bad;
    } else if (strcmp(key, "samples") == 0) {
        if (parse_uint(v, len, 0, 1000000000, &cfg->max_samples))
            goto bad;
    } else if (strcmp(key, "elt") == 0) {
        if (is(v, len, "fast"))
            cfg->elt_slow = 0;
        else if (is(v, len, "slow"))
            cfg->elt_slow = 1;
        else
            goto bad;
    } else if (strcmp(key, "drain_ms") == 0) {
        if (parse_uint(v, len, 1, 600000, &cfg->drain_ms))
            goto bad;
    } else if (strcmp(key, "flush_ms") == 0) {
        if (parse_uint(v, len, 1, 3600000, &cfg->flush_ms))
            goto bad;
    } else if (strcmp(key, "first_pid") == 0) {
        if (parse_uint(v, len, 0, 0x7fffffff, &u))
            goto bad;
        cfg->first_pid = (int)u;
    } else if (strcmp(key, "notify") == 0) {
        /* a socket name: an abstract one ("@..."), printable, no ';' */
        if (len < 2 || len >= sizeof cfg->notify || v[0] != '@')
            goto bad;
        for (size_t i = 0; i < len; i++)
            if (v[i] <= 0x20 || v[i] >= 0x7f || v[i] == ';')
                goto bad;
        memcpy(cfg->notify, v, len);
        cfg->notify[len] = 0;
    } else if (strcmp(key, "activities") == 0) {
        if (parse_uint(v, len, 0, 2, &u))
            goto bad;
        cfg->activities = (int)u;
    } else if (strcmp(key, "threads") == 0) {
        if (is(v, len, "all"))
            cfg->all_threads = 1;
        else if (is(v, len, "runtime"))
            cfg->all_threads = 0;
        else
            goto bad;
    } else if (strcmp(key, "wall_budget") == 0) {
        /* wall mode: signals a second (wall.c) */
        if (parse_uint(v, len, 1, 1000000, &cfg->wall_budget))
            goto bad;
    } else if (strcmp(key, "alloc_sample") == 0) {
        /* bytes per sampled stack: 0 (none), or 1 byte to 1 GiB */
        if (parse_uint(v, len, 0, 1u << 30, &cfg->alloc_sample))
            goto bad;
    } else if (strcmp(key, "alloc_path") == 0) {
        /* where alloc stacks come from: the runtime's sampled allocations
         * where it has them (auto), or ObjectAllocated (callback) */
        if (is(v, len, "auto"))
            cfg->alloc_path = MDP_ALLOC_PATH_AUTO;
        else if (is(v, len, "callback"))
            cfg->alloc_path = MDP_ALLOC_PATH_CALLBACK;
        else
            goto bad;
    } else if (strcmp(key, "ilmaps") == 0) {
        if (is(v, len, "image"))
            cfg->ilmaps = MDP_ILMAPS_IMAGE;
        else if (is(v, len, "runtime"))
            cfg->ilmaps = MDP_ILMAPS_RUNTIME;
        else if (is(v, len, "check"))
            cfg->ilmaps = MDP_ILMAPS_CHECK;
        else
            goto bad;
    } else if (strcmp(key, "r2rnames") == 0) {
        if (is(v, len, "image"))
            cfg->r2rnames = MDP_R2RNAMES_IMAGE;
        else if (is(v, len, "runtime"))
            cfg->r2rnames = MDP_R2RNAMES_RUNTIME;
        else
            goto bad;
    } else if (strcmp(key, "clock") == 0) {
        /* sample mode's CPU clock (perfclock.c) */
        if (is(v, len, "auto"))
            cfg->clock = MDP_CLOCK_AUTO;
        else if (is(v, len, "perf"))
            cfg->clock = MDP_CLOCK_PERF;
        else if (is(v, len, "timer"))
            cfg->clock = MDP_CLOCK_TIMER;
        else if (is(v, len, "adaptive"))
            cfg->clock = MDP_CLOCK_ADAPTIVE;
        else
            goto bad;
    } else if (strcmp(key, "verbose") == 0) {
        if (parse_uint(v, len, 0, 2, &u))
            goto bad;
        cfg->verbose = (int)u;
    } else {
        snprintf(err, errlen, "unknown setting '%s'", key);
        return -1;
    }
    return 0;
bad:
    snprintf(err, errlen, "bad value '%.*s' for %s", (int)(len > 200 ? 200 : len), v, key);
    return -1;
}

static const char *const keys[] = {
    "mode",       "rate",       "depth",    "output",   "debug_names", "duration",
    "samples",    "elt",        "verbose",  "drain_ms", "flush_ms",    "first_pid",
    "notify",     "activities", "threads",  "slice",    "wall_budget", "alloc_sample",
    "alloc_path", "ilmaps",     "r2rnames", "clock"};

int mdp_config_from_env(mdp_config *cfg, char *err, size_t errlen)
{
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        char name[64] = "MDPROFILE_";
        size_t n = strlen(name);
        for (const char *k = keys[i]; *k && n + 1 < sizeof name; k++)
            name[n++] = (char)(*k >= 'a' && *k <= 'z' ? *k - 32 : *k);
        name[n] = 0;
        const char *v = getenv(name);
        if (v && set(cfg, keys[i], v, strlen(v), err, errlen) != 0) {
            size_t m = strlen(err);
            snprintf(err + m, errlen - m, " (environment variable %s)", name);
            return -1;
        }
    }
    return 0;
}

int mdp_config_parse(mdp_config *cfg, const char *text, size_t len, char *err, size_t errlen)
{
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != ';')
            j++;
        if (j > i) {
            const char *eq = memchr(text + i, '=', j - i);
            char key[32];
            size_t klen = eq ? (size_t)(eq - (text + i)) : 0;
            if (!eq || klen == 0 || klen >= sizeof key) {
                snprintf(err, errlen, "malformed setting '%.*s'", (int)(j - i > 200 ? 200 : j - i),
                         text + i);
                return -1;
            }
            memcpy(key, text + i, klen);
            key[klen] = 0;
            /* A path may hold ';': output is written last and runs to the end. */
            if (strcmp(key, "output") == 0)
                j = len;
            if (set(cfg, key, eq + 1, j - i - klen - 1, err, errlen) != 0)
                return -1;
        }
        i = j + 1;
    }
    return 0;
}

int mdp_config_format(const mdp_config *cfg, char *buf, size_t len)
{
    char modes[96];
    if (mdp_mode_format(cfg->modes, modes, sizeof modes) < 0)
        return -1;
    int n = snprintf(
        buf, len,
        "mode=%s;rate=%u;slice=%u;depth=%u;debug_names=%d;duration=%u;samples=%u;elt=%s;"
        "verbose=%d;drain_ms=%u;flush_ms=%u;activities=%d;threads=%s;wall_budget=%u;"
        "alloc_sample=%u;alloc_path=%s;ilmaps=%s;r2rnames=%s;%s%s%s%s%s%soutput=%s",
        modes, cfg->rate, cfg->slice_ms, cfg->max_depth, cfg->debug_names, cfg->duration_ms,
        cfg->max_samples, cfg->elt_slow ? "slow" : "fast", cfg->verbose, cfg->drain_ms,
        cfg->flush_ms, cfg->activities, cfg->all_threads ? "all" : "runtime",
        cfg->wall_budget ? cfg->wall_budget : MDP_WALL_BUDGET, cfg->alloc_sample,
        cfg->alloc_path == MDP_ALLOC_PATH_CALLBACK ? "callback" : "auto",
        cfg->ilmaps == MDP_ILMAPS_CHECK     ? "check"
        : cfg->ilmaps == MDP_ILMAPS_RUNTIME ? "runtime"
                                            : "image",
        cfg->r2rnames == MDP_R2RNAMES_IMAGE ? "image" : "runtime",
        /* the default clock unsaid: a profiler library of the release
         * before (loaded in a process attached to before) takes the text,
         * and its default was the same */
        cfg->clock != MDP_CLOCK_ADAPTIVE ? "clock=" : "",
        cfg->clock != MDP_CLOCK_ADAPTIVE ? mdp_clock_setting(cfg->clock) : "",
        cfg->clock != MDP_CLOCK_ADAPTIVE ? ";" : "", cfg->notify[0] ? "notify=" : "", cfg->notify,
        cfg->notify[0] ? ";" : "", cfg->output);
    if (n < 0 || (size_t)n >= len)
        return -1;
    return n;
}

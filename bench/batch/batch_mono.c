/* bench/batch/batch_mono: the libmono peer of `mdinspect batch`
 * (bench/batch/README.md). Reads the same input lines from standard input
 * and does the same lookups through libmono 6.8's C API: the module of a
 * `PATH TOKEN` line by path (each file opened once with
 * mono_assembly_open_full, kept in a hash table here), of an `MVID TOKEN`
 * line or a log frame by MVID (every assembly of the given folder opened
 * up front and keyed by mono_image_get_guid: libmono has no MVID lookup),
 * then mono_get_method and mono_method_full_name (libmono's name, printed
 * one line per input line, frames of a stack separated by TABs). The JIT
 * init runs before the clock starts (reported as init_ms). The timed work
 * is whole_run(). Not linked into anything shipped.
 *
 * Usage: batch_mono [DIR] < IN > OUT    (DIR: where MVIDs are found) */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <mono/jit/jit.h>
#include <mono/metadata/assembly.h>
#include <mono/metadata/class.h>
#include <mono/metadata/debug-helpers.h>
#include <mono/metadata/image.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A small open-addressing table of string keys (FNV-1a). */
struct slot {
    char *key;
    MonoImage *img;
};
static struct slot table[1 << 14];

static unsigned hash(const char *s, size_t n)
{
    unsigned h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 16777619u;
    return h;
}

static struct slot *find(const char *s, size_t n)
{
    for (unsigned i = hash(s, n) & ((1 << 14) - 1);; i = (i + 1) & ((1 << 14) - 1))
        if (!table[i].key || (strlen(table[i].key) == n && memcmp(table[i].key, s, n) == 0))
            return &table[i];
}

static MonoImage *open_path(const char *s, size_t n)
{
    struct slot *sl = find(s, n);
    if (!sl->key) {
        MonoImageOpenStatus st;
        sl->key = strndup(s, n);
        MonoAssembly *a = mono_assembly_open_full(sl->key, &st, 0);
        sl->img = a ? mono_assembly_get_image(a) : NULL;
    }
    return sl->img;
}

/* "XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX" -> 32 lower-case hex digits. */
static void mvid_key(const char *guid, char out[33])
{
    int k = 0;
    for (const char *p = guid; *p && k < 32; p++)
        if (*p != '-')
            out[k++] = (char)(*p >= 'A' && *p <= 'F' ? *p - 'A' + 'a' : *p);
    out[k] = '\0';
}

static void index_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    if (!d)
        return;
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        char path[4096], key[33];
        if (n < 5 || (strcmp(e->d_name + n - 4, ".dll") && strcmp(e->d_name + n - 4, ".exe")))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        MonoImage *img = open_path(path, strlen(path));
        if (!img)
            continue;
        mvid_key(mono_image_get_guid(img), key);
        struct slot *sl = find(key, 32);
        if (!sl->key) {
            sl->key = strdup(key);
            sl->img = img;
        }
    }
    closedir(d);
}

static unsigned long resolved, unresolved;

static void name(MonoImage *img, uint32_t token)
{
    MonoMethod *m = img ? mono_get_method(img, token, NULL) : NULL;
    char *s = m ? mono_method_full_name(m, 0) : NULL;
    if (s) {
        fputs(s, stdout);
        mono_free(s);
        resolved++;
    } else {
        fputs("?", stdout);
        unresolved++;
    }
}

static __attribute__((noinline)) void whole_run(const char *dir)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    if (dir) {
        index_dir(dir);
        char fac[4096];
        snprintf(fac, sizeof fac, "%s/Facades", dir);
        index_dir(fac);
    }
    while ((n = getline(&line, &cap, stdin)) > 0) {
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (strncmp(line, "stack ", 6) == 0) {
            char *p = strchr(line + 6, ' ');
            fputs("stack", stdout);
            while (p) {
                char *f = p + 1;
                p = strchr(f, ' ');
                putchar('\t');
                if (strlen(f) > 43 && f[32] == ':')
                    name(find(f, 32)->img, (uint32_t)strtoul(f + 33, NULL, 16));
            }
        } else {
            char *sp = strrchr(line, ' ');
            if (!sp)
                continue;
            uint32_t tok = (uint32_t)strtoul(sp + 1, NULL, 16);
            size_t k = (size_t)(sp - line);
            name(dir && k == 32 ? find(line, 32)->img : open_path(line, k), tok);
        }
        putchar('\n');
    }
    free(line);
}

int main(int argc, char **argv)
{
    double t0 = now();
    mono_jit_init_version("bench", "v4.0.30319");
    double t1 = now();
    whole_run(argc > 1 ? argv[1] : NULL);
    fflush(stdout);
    double t2 = now();
    fprintf(stderr, "batch_mono: resolved %lu unresolved %lu init_ms %.1f work_ms %.1f\n", resolved,
            unresolved, (t1 - t0) * 1e3, (t2 - t1) * 1e3);
    return 0;
}

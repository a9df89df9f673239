/* Plain replayer for a libFuzzer harness: feeds each file named on the
 * command line, and each regular file inside each directory named there (in
 * name order), to LLVMFuzzerTestOneInput, so the corpus runs in `make check`
 * without clang. Each input sits in a heap buffer of exactly its size, so a
 * sanitizer or valgrind sees any read past its end. A crash fails the test
 * by killing the process; an unreadable input or a non-zero return counts as
 * a failure. Prints only the closing "N passed, M failed" line (and the names
 * of failed inputs). With no arguments it replays REPLAY_DEFAULT_CORPUS
 * under $MDT_TOP_SRCDIR. */
#define _DEFAULT_SOURCE /* strdup */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "paths.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static unsigned passed, failed;

static void fail(const char *path, const char *why)
{
    fprintf(stderr, "FAIL %s: %s\n", path, why);
    failed++;
}

static void run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (!f) {
        fail(path, "cannot open");
        return;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        fail(path, "cannot size");
        return;
    }
    /* malloc(0) may return NULL; keep a real (empty) allocation. */
    buf = malloc(n ? (size_t)n : 1);
    if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        fclose(f);
        fail(path, "cannot read");
        return;
    }
    fclose(f);
    if (LLVMFuzzerTestOneInput(buf, (size_t)n) != 0)
        fail(path, "harness returned non-zero");
    else
        passed++;
    free(buf);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void run_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    char **names = NULL;
    size_t n = 0, cap = 0;
    if (!d) {
        fail(dir, "cannot open directory");
        return;
    }
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        if (n == cap) {
            char **nn = realloc(names, (cap = cap ? cap * 2 : 64) * sizeof *names);
            if (!nn)
                abort();
            names = nn;
        }
        if (!(names[n++] = strdup(de->d_name)))
            abort();
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, by_name);
    for (size_t i = 0; i < n; i++) {
        char path[4096];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
            run_file(path);
        free(names[i]);
    }
    free(names);
}

static void run_arg(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        fail(path, "no such file or directory");
    else if (S_ISDIR(st.st_mode))
        run_dir(path);
    else
        run_file(path);
}

int main(int argc, char **argv)
{
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            run_arg(argv[i]);
    } else {
#ifdef REPLAY_DEFAULT_CORPUS
        char dir[4096];
        run_arg(src_path(dir, sizeof dir, REPLAY_DEFAULT_CORPUS));
#else
        fprintf(stderr, "usage: %s FILE-OR-DIR...\n", argv[0]);
        return 2;
#endif
    }
    printf("%u passed, %u failed\n", passed, failed);
    return failed || !passed ? EXIT_FAILURE : EXIT_SUCCESS;
}

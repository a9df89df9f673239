/* dlnow: load shared objects as a host process loads a profiler, with
 * dlopen(RTLD_NOW), so that every symbol must be bound at once: a library
 * that uses a dependency without linking it (libmdprofile.so and zlib's
 * inflate) fails here rather than in a profiled program that sets
 * LD_BIND_NOW=1, or on the first call of the missing function.
 *
 *   dlnow PATH[=SYMBOL]...   each PATH must load; SYMBOL, when given, must
 *                            be exported by it
 *
 * Prints one line per object and "N passed, M failed"; exits 1 on any
 * failure. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    int passed = 0, failed = 0;
    for (int i = 1; i < argc; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s", argv[i]);
        char *sym = strchr(path, '=');
        if (sym)
            *sym++ = 0;
        void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
        if (!h) {
            printf("FAIL dlopen(RTLD_NOW) %s: %s\n", path, dlerror());
            failed++;
            continue;
        }
        if (sym && !dlsym(h, sym)) {
            printf("FAIL %s exports no %s\n", path, sym);
            failed++;
        } else {
            printf("ok   dlopen(RTLD_NOW) %s%s%s\n", path, sym ? ", exports " : "", sym ? sym : "");
            passed++;
        }
        /* not closed: a profiler library pins itself (RTLD_NODELETE) */
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed || !passed ? 1 : 0;
}

/* The .NET shared framework the tests read, where one is installed: the
 * newest version under the dotnet root's shared/Microsoft.NETCore.App.
 * The root is MDT_DOTNET_ROOT, else DOTNET_ROOT, else the directory of the
 * `dotnet` on PATH, links resolved. Static: each test program has its
 * own copy. Include it after defining _GNU_SOURCE (strverscmp). */
#ifndef MDT_TEST_FRAMEWORK_H
#define MDT_TEST_FRAMEWORK_H

#include <dirent.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int test_dotnet_root(char *out, size_t n)
{
    const char *env = getenv("MDT_DOTNET_ROOT");
    if (!env || !*env)
        env = getenv("DOTNET_ROOT");
    if (env && *env) {
        snprintf(out, n, "%s", env);
        return 0;
    }
    const char *path = getenv("PATH");
    char dir[PATH_MAX], exe[PATH_MAX], real[PATH_MAX];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)len, path);
        int w = snprintf(exe, sizeof exe, "%s/dotnet", len ? dir : ".");
        if (w > 0 && (size_t)w < sizeof exe && access(exe, X_OK) == 0 && realpath(exe, real)) {
            snprintf(out, n, "%s", dirname(real));
            return 0;
        }
        path += len + (path[len] == ':');
    }
    return -1;
}

/* The framework's folder into out; -1 where none is installed. */
static int test_framework(char *out, size_t n)
{
    char root[PATH_MAX], base[PATH_MAX + 64], best[256] = "";
    if (test_dotnet_root(root, sizeof root) != 0)
        return -1;
    snprintf(base, sizeof base, "%s/shared/Microsoft.NETCore.App", root);
    DIR *d = opendir(base);
    struct dirent *e;
    if (!d)
        return -1;
    while ((e = readdir(d)))
        if (e->d_name[0] != '.' && strverscmp(e->d_name, best) > 0)
            snprintf(best, sizeof best, "%s", e->d_name);
    closedir(d);
    if (!best[0])
        return -1;
    int w = snprintf(out, n, "%s/%s", base, best);
    return w > 0 && (size_t)w < n ? 0 : -1; /* a path cut short is no path */
}

#endif

/* The names of logs, shared by the profiler (which opens its own) and
 * the launcher (which checks the path first and names the first log):
 * "%p" stands for the pid, and a process other than the first writes
 * NAME.PID.EXT beside the first's NAME.EXT (core/logfile.c). */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "core/core.h"

int mdp_log_expand(char *out, size_t cap, const char *path, int pid)
{
    size_t o = 0;
    for (const char *p = path; *p; p++) {
        char num[16];
        const char *put = p;
        size_t n = 1;
        if (p[0] == '%' && p[1] == 'p') {
            n = (size_t)snprintf(num, sizeof num, "%d", pid);
            put = num;
            p++;
        }
        if (o + n >= cap)
            return -1;
        memcpy(out + o, put, n);
        o += n;
    }
    if (o >= cap)
        return -1;
    out[o] = 0;
    return 0;
}

int mdp_log_sibling_name(char *out, size_t cap, const char *path, int pid, unsigned n)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    const char *dot = strrchr(base, '.');
    if (!dot || dot == base)
        dot = base + strlen(base);
    char tag[32];
    if (pid < 0)
        snprintf(tag, sizeof tag, ".%u", n);
    else if (n)
        snprintf(tag, sizeof tag, ".%d.%u", pid, n);
    else
        snprintf(tag, sizeof tag, ".%d", pid);
    int r = snprintf(out, cap, "%.*s%s%s", (int)(dot - path), path, tag, dot);
    return r < 0 || (size_t)r >= cap ? -1 : 0;
}

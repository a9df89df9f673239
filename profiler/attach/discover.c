/* Finding the diagnostics socket of a process on Linux, and saying why
 * there is none. The runtime binds `{TMPDIR}/dotnet-diagnostic-{pid}-{key}-socket`
 * with its own TMPDIR (/tmp when unset), its own PID and, as key, its start
 * time in clock ticks since boot (field 22 of /proc/self/stat), with mode
 * 0600 (ipc-protocol.md, "Naming and Location Conventions"; the runtime's
 * ds-ipc-pal-socket.c). A client must therefore look where the *target*
 * looks: its TMPDIR comes from /proc/pid/environ, its files from
 * /proc/pid/root when it lives in another mount namespace (a container),
 * and its PID there from the NSpid line of /proc/pid/status. Several
 * sockets for one PID happen when a runtime died without removing its
 * socket and the PID was reused: the start time picks the live one. */
#define _DEFAULT_SOURCE /* AT_SYMLINK_NOFOLLOW, O_CLOEXEC, PATH_MAX, dirfd */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ipc_int.h"

#define ENVIRON_CAP (4u << 20) /* larger environments are read in part */
#define MAX_DIRS 4

/* What /proc says about the target; fields not known are false/0/empty. */
typedef struct proc_facts {
    int pid;
    char comm[64];
    char state;
    bool have_start;
    unsigned long long starttime;
    bool have_euid;
    unsigned long euid;
    long nspid; /* PID in the target's innermost PID namespace */
    long tgid;  /* the process a thread ID belongs to */
    char *env;  /* NUL-separated, talloc'd; NULL when unreadable */
    size_t env_len;
    int env_errno;
    bool other_mntns;
} proc_facts;

/* Read a /proc file whole (up to cap bytes) into a talloc buffer with a
 * terminating NUL. NULL with errno set on failure. */
static char *slurp(TALLOC_CTX *ctx, const char *path, size_t cap, size_t *len)
{
    size_t size = 4096, n = 0;
    char *buf;
    int fd = open(path, O_RDONLY | O_CLOEXEC);

    if (fd < 0)
        return NULL;
    buf = talloc_size(ctx, size + 1);
    while (buf) {
        ssize_t r = read(fd, buf + n, size - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            talloc_free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
        if (n == size) {
            if (size >= cap)
                break;
            size = size * 2 > cap ? cap : size * 2;
            buf = talloc_realloc_size(ctx, buf, size + 1);
        }
    }
    close(fd);
    if (!buf) {
        errno = ENOMEM;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

static void read_stat(TALLOC_CTX *ctx, proc_facts *pf)
{
    char path[64];
    size_t len;
    char *s, *open_paren, *close_paren, *p;

    snprintf(path, sizeof path, "/proc/%d/stat", pf->pid);
    s = slurp(ctx, path, 4096, &len);
    if (!s)
        return;
    /* "pid (comm) state ppid ...": comm may hold spaces and parentheses,
     * so it ends at the last ')'. */
    open_paren = strchr(s, '(');
    close_paren = strrchr(s, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return;
    snprintf(pf->comm, sizeof pf->comm, "%.*s", (int)(close_paren - open_paren - 1),
             open_paren + 1);
    p = close_paren + 1;
    while (*p == ' ')
        p++;
    pf->state = *p;
    /* The state is field 3; the start time is field 22. */
    for (int field = 3; field < 22 && *p; field++) {
        while (*p && *p != ' ')
            p++;
        while (*p == ' ')
            p++;
    }
    if (isdigit((unsigned char)*p)) {
        pf->starttime = strtoull(p, NULL, 10);
        pf->have_start = true;
    }
}

static void read_status(TALLOC_CTX *ctx, proc_facts *pf)
{
    char path[64];
    size_t len;
    char *s, *line;

    pf->nspid = pf->pid;
    pf->tgid = pf->pid;
    snprintf(path, sizeof path, "/proc/%d/status", pf->pid);
    s = slurp(ctx, path, 65536, &len);
    if (!s)
        return;
    for (line = s; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, "Uid:", 4) == 0) {
            /* real, effective, saved, filesystem */
            char *end;
            strtoul(line + 4, &end, 10);
            pf->euid = strtoul(end, &end, 10);
            pf->have_euid = true;
        } else if (strncmp(line, "Tgid:", 5) == 0) {
            pf->tgid = strtol(line + 5, NULL, 10);
        } else if (strncmp(line, "NSpid:", 6) == 0) {
            char *p = line + 6, *end;
            for (;;) {
                long v = strtol(p, &end, 10);
                if (end == p)
                    break;
                pf->nspid = v;
                p = end;
            }
        }
    }
}

static void read_env_and_ns(TALLOC_CTX *ctx, proc_facts *pf)
{
    char path[64], mine[64], theirs[64];
    ssize_t a, b;

    snprintf(path, sizeof path, "/proc/%d/environ", pf->pid);
    pf->env = slurp(ctx, path, ENVIRON_CAP, &pf->env_len);
    pf->env_errno = pf->env ? 0 : errno;

    snprintf(path, sizeof path, "/proc/%d/ns/mnt", pf->pid);
    a = readlink("/proc/self/ns/mnt", mine, sizeof mine - 1);
    b = readlink(path, theirs, sizeof theirs - 1);
    pf->other_mntns = a > 0 && b > 0 && (a != b || memcmp(mine, theirs, (size_t)a) != 0);
}

/* The value of variable `name` (exact case) in the target's environment. */
static const char *env_get(const proc_facts *pf, const char *name)
{
    size_t nl = strlen(name);
    for (size_t at = 0; pf->env && at < pf->env_len; at += strlen(pf->env + at) + 1)
        if (strncmp(pf->env + at, name, nl) == 0 && pf->env[at + nl] == '=')
            return pf->env + at + nl + 1;
    return NULL;
}

/* The setting that turned the diagnostics IPC off, e.g.
 * "DOTNET_EnableDiagnostics=0", or NULL. Names are compared without case,
 * to explain as much as possible; the runtime's own lookup decides. */
static const char *diagnostics_disabled(const proc_facts *pf)
{
    static const char *const names[] = {"DOTNET_EnableDiagnostics", "COMPlus_EnableDiagnostics",
                                        "DOTNET_EnableDiagnostics_IPC",
                                        "COMPlus_EnableDiagnostics_IPC"};
    for (size_t at = 0; pf->env && at < pf->env_len; at += strlen(pf->env + at) + 1) {
        const char *e = pf->env + at;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            size_t nl = strlen(names[i]);
            if (strncasecmp(e, names[i], nl) == 0 && strcmp(e + nl, "=0") == 0)
                return e;
        }
    }
    return NULL;
}

/* Which runtime library the process maps: "coreclr", "mono", "" (none
 * seen) or NULL (maps unreadable). */
static const char *mapped_runtime(int pid)
{
    char path[64], line[8192];
    bool mono = false;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/maps", pid);
    f = fopen(path, "re");
    if (!f)
        return NULL;
    while (fgets(line, sizeof line, f)) {
        if (strstr(line, "/libcoreclr.so")) {
            fclose(f);
            return "coreclr";
        }
        if (strstr(line, "/libmonosgen-2.0.so") || strstr(line, "/libmono-2.0.so"))
            mono = true;
    }
    fclose(f);
    return mono ? "mono" : "";
}

char mdp__ipc_proc_state(int pid)
{
    char path[64], buf[512];
    ssize_t n;
    const char *close_paren;
    int fd;

    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');
    return close_paren && close_paren[1] == ' ' ? close_paren[2] : 0;
}

/* ---- the search ----------------------------------------------------------- */

typedef struct search {
    char dirs[MAX_DIRS][PATH_MAX];
    int ndirs;
    long pids[2];
    int npids;
    /* best match so far */
    char best[PATH_MAX];
    bool best_exact;
    struct timespec best_mtime;
    bool have_best;
    /* what was passed over, for the diagnosis */
    char notes[1024];
} search;

static void add_dir(search *s, const char *prefix, const char *dir)
{
    char d[PATH_MAX];
    size_t n;

    if (!dir || !*dir || s->ndirs == MAX_DIRS)
        return;
    n = (size_t)snprintf(d, sizeof d, "%s%s", prefix, dir);
    if (n >= sizeof d)
        return;
    while (n > 1 && d[n - 1] == '/')
        d[--n] = '\0';
    for (int i = 0; i < s->ndirs; i++)
        if (strcmp(s->dirs[i], d) == 0)
            return;
    memcpy(s->dirs[s->ndirs++], d, n + 1);
}

static void note(search *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(search *s, const char *fmt, ...)
{
    size_t used = strlen(s->notes);
    va_list ap;
    if (used >= sizeof s->notes - 1)
        return;
    va_start(ap, fmt);
    vsnprintf(s->notes + used, sizeof s->notes - used, fmt, ap);
    va_end(ap);
}

/* The key of `name` when it is "dotnet-diagnostic-{one of pids}-{digits}-socket". */
static bool match_name(const search *s, const char *name, unsigned long long *key)
{
    static const char prefix[] = "dotnet-diagnostic-";
    const char *p;
    char *end;
    long pid;

    if (strncmp(name, prefix, sizeof prefix - 1) != 0)
        return false;
    p = name + sizeof prefix - 1;
    if (!isdigit((unsigned char)*p))
        return false;
    pid = strtol(p, &end, 10);
    if (*end != '-' || !isdigit((unsigned char)end[1]))
        return false;
    *key = strtoull(end + 1, &end, 10);
    if (strcmp(end, "-socket") != 0)
        return false;
    for (int i = 0; i < s->npids; i++)
        if (s->pids[i] == pid)
            return true;
    return false;
}

/* Whether a candidate beats the best so far: the start-time match wins,
 * then the newest modification time. */
static bool better(const search *s, bool exact, const struct timespec *mtime)
{
    if (!s->have_best)
        return true;
    if (exact != s->best_exact)
        return exact;
    return mtime->tv_sec > s->best_mtime.tv_sec ||
           (mtime->tv_sec == s->best_mtime.tv_sec && mtime->tv_nsec > s->best_mtime.tv_nsec);
}

static void scan_dir(search *s, const proc_facts *pf, const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    if (!d) {
        if (errno != ENOENT)
            note(s, "; cannot list %s: %s", dir, strerror(errno));
        return;
    }
    while ((e = readdir(d))) {
        unsigned long long key;
        struct stat st;
        bool exact;
        char full[PATH_MAX];

        if (!match_name(s, e->d_name, &key))
            continue;
        if ((size_t)snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= sizeof full)
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
            continue;
        if (!S_ISSOCK(st.st_mode)) {
            note(s, "; %s is not a socket (ignored)", full);
            continue;
        }
        /* A socket of another user cannot be the runtime's (it binds with
         * its own uid): using it could hand the request to an impostor. */
        if (pf->have_euid && st.st_uid != pf->euid) {
            note(s, "; %s belongs to uid %u, the process runs as uid %lu (ignored)", full,
                 (unsigned)st.st_uid, pf->euid);
            continue;
        }
        exact = pf->have_start && key == pf->starttime;
        if (!better(s, exact, &st.st_mtim))
            continue;
        memcpy(s->best, full, strlen(full) + 1);
        s->best_exact = exact;
        s->best_mtime = st.st_mtim;
        s->have_best = true;
    }
    closedir(d);
}

static int diagnose(search *s, const proc_facts *pf, char *err, size_t errlen)
{
    char where[MAX_DIRS * (PATH_MAX + 2)] = "";
    const char *why, *disabled = diagnostics_disabled(pf);
    const char *rt = mapped_runtime(pf->pid);
    char envwhy[160] = "";

    for (int i = 0; i < s->ndirs; i++) {
        strcat(where, i ? ", " : "");
        strcat(where, s->dirs[i]);
    }
    if (pf->state == 'Z')
        why = "it is a zombie (it has exited)";
    else if (disabled)
        why = "its diagnostics IPC is disabled";
    else if (rt && strcmp(rt, "mono") == 0)
        why = "it runs the Mono runtime, which has no such socket";
    else if (rt && !*rt)
        why = "it is not a .NET (CoreCLR) process: libcoreclr.so is not mapped (unless it is "
              "a single-file app, which has the runtime built in)";
    else
        why = "the runtime may be older than .NET Core 3.0 (no diagnostics IPC), still starting, "
              "or bind its socket where this user cannot see it (another TMPDIR or mount "
              "namespace; see doc/attach.md)";
    if (!pf->env && pf->env_errno == EACCES)
        snprintf(envwhy, sizeof envwhy,
                 "; its environment is not readable by uid %u, so its TMPDIR is unknown (set "
                 "TMPDIR to the target's)",
                 (unsigned)geteuid());
    return mdp__ipc_fail(err, errlen, MDT_ENOTFOUND,
                         "no diagnostics socket for process %d (%s): %s%s%s [looked for "
                         "dotnet-diagnostic-%ld-*-socket in %s%s]%s",
                         pf->pid, pf->comm[0] ? pf->comm : "?", why, disabled ? " by " : "",
                         disabled ? disabled : "", pf->nspid, where, s->notes, envwhy);
}

int mdp_ipc_find_socket(int pid, char *path, size_t pathlen, char *err, size_t errlen)
{
    TALLOC_CTX *tmp;
    proc_facts pf = {.pid = pid};
    search *s;
    char procdir[64];
    struct stat st;
    int rc = 0;

    if (pid <= 0)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "invalid pid %d", pid);
    if (!path || pathlen == 0)
        return mdp__ipc_fail(err, errlen, MDT_EINVAL, "no buffer for the socket path");
    path[0] = '\0';
    snprintf(procdir, sizeof procdir, "/proc/%d", pid);
    if (stat(procdir, &st) != 0)
        return mdp__ipc_fail(err, errlen, MDT_ENOTFOUND, "no process with pid %d", pid);

    tmp = talloc_new(NULL);
    s = talloc_zero(tmp, search);
    if (!tmp || !s) {
        talloc_free(tmp);
        return mdp__ipc_fail(err, errlen, MDT_ENOMEM, "out of memory");
    }
    read_stat(tmp, &pf);
    read_status(tmp, &pf);
    if (pf.tgid != pid) {
        /* /proc/TID exists for every thread, though it is not listed */
        talloc_free(tmp);
        return mdp__ipc_fail(err, errlen, MDT_ENOTFOUND,
                             "%d is a thread of process %ld, not a process: attach to %ld", pid,
                             pf.tgid, pf.tgid);
    }
    read_env_and_ns(tmp, &pf);

    s->pids[s->npids++] = pf.nspid;
    if (pf.nspid != pid)
        s->pids[s->npids++] = pid;
    if (pf.env) {
        const char *t = env_get(&pf, "TMPDIR");
        char root[64] = "";
        if (pf.other_mntns)
            snprintf(root, sizeof root, "/proc/%d/root", pid);
        add_dir(s, root, t && *t ? t : "/tmp");
    }
    add_dir(s, "", getenv("TMPDIR"));
    add_dir(s, "", "/tmp");
    for (int i = 0; i < s->ndirs; i++)
        scan_dir(s, &pf, s->dirs[i]);

    if (!s->have_best)
        rc = diagnose(s, &pf, err, errlen);
    else if (strlen(s->best) >= pathlen)
        rc = mdp__ipc_fail(err, errlen, MDT_EINVAL, "socket path %s longer than the buffer (%zu)",
                           s->best, pathlen);
    else
        memcpy(path, s->best, strlen(s->best) + 1);
    talloc_free(tmp);
    return rc;
}

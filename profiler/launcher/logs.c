/* What the profilers mdprofile launched or attached say over the channel
 * (core/channel.h): which log each process writes, when a log is
 * complete, when an attached profiler has been let go, and diagnostics,
 * which are printed as they come (a write error, a refused start): the
 * profiler itself never writes to its host's standard error. Messages
 * from another user are ignored, and a message's pid must be its sender's
 * (the kernel's credentials). When the launcher exits it lists every log
 * it saw written, one line each. */
#define _GNU_SOURCE
#include "config.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/channel.h"
#include "launcher/launch.h"

int mdl_logs_open(struct mdl_logs *l)
{
    memset(l, 0, sizeof *l);
    l->fd = mdp_channel_listen(l->name, sizeof l->name);
    if (l->fd < 0)
        l->name[0] = 0;
    return l->fd < 0 ? -1 : 0;
}

void mdl_logs_close(struct mdl_logs *l)
{
    if (l->fd >= 0)
        close(l->fd);
    l->fd = -1;
    free(l->procs);
    l->procs = NULL;
    l->n = l->cap = 0;
}

struct mdl_proc *mdl_logs_find(struct mdl_logs *l, pid_t pid)
{
    for (size_t i = 0; i < l->n; i++)
        if (l->procs[i].pid == pid)
            return &l->procs[i];
    return NULL;
}

static struct mdl_proc *get(struct mdl_logs *l, pid_t pid)
{
    struct mdl_proc *p = mdl_logs_find(l, pid);
    if (p)
        return p;
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        if (cap > 100000)
            return NULL; /* bounded: a flood of strangers cannot exhaust memory */
        void *v = realloc(l->procs, cap * sizeof *l->procs);
        if (!v)
            return NULL;
        l->procs = v;
        l->cap = cap;
    }
    p = &l->procs[l->n++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    return p;
}

/* The next space-separated field of *s (NUL-terminated in place). */
static char *field(char **s)
{
    char *f = *s;
    if (!f || !*f)
        return NULL;
    char *sp = strchr(f, ' ');
    if (sp) {
        *sp = 0;
        *s = sp + 1;
    } else {
        *s = f + strlen(f);
    }
    return f;
}

static void handle(struct mdl_logs *l, char *msg, pid_t sender, const void *from, unsigned fromlen)
{
    char *s = msg;
    char *what = field(&s), *pidtext = field(&s);
    if (!what || !pidtext || atoi(pidtext) != sender)
        return;
    struct mdl_proc *p = get(l, sender);
    if (!p)
        return;
    if (fromlen && fromlen <= sizeof p->from) {
        memcpy(p->from, from, fromlen);
        p->fromlen = fromlen;
    }
    if (strcmp(what, "log") == 0) {
        char *ppid = field(&s), *path = field(&s), *cmd = s;
        if (!ppid || !path)
            return;
        p->ppid = atoi(ppid);
        mdp_pct_unescape(p->path, sizeof p->path, path, strlen(path));
        snprintf(p->cmd, sizeof p->cmd, "%s", cmd ? cmd : "");
    } else if (strcmp(what, "end") == 0) {
        char *end = field(&s), *path = s;
        if (!end)
            return;
        snprintf(p->end, sizeof p->end, "%s", end);
        if (path && *path && !p->path[0])
            mdp_pct_unescape(p->path, sizeof p->path, path, strlen(path));
    } else if (strcmp(what, "detached") == 0) {
        p->detached = 1;
    } else if (strcmp(what, "note") == 0) {
        char text[MDP_CHANNEL_MAX];
        mdp_pct_unescape(text, sizeof text, s, strlen(s));
        /* printable only: the text comes from another process */
        for (char *c = text; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        if (strncmp(text, "cannot write the log", 20) == 0)
            p->write_failed = 1;
        if (l->notes++ < 1000)
            fprintf(stderr, "mdprofile: process %d: %s\n", (int)sender, text);
    }
}

int mdl_logs_read(struct mdl_logs *l, int timeout_ms)
{
    if (l->fd < 0) {
        if (timeout_ms > 0)
            usleep((useconds_t)timeout_ms * 1000);
        return 0;
    }
    int got = 0;
    uid_t me = getuid();
    for (;;) {
        char buf[MDP_CHANNEL_MAX + 1];
        unsigned char from[128];
        unsigned fromlen = sizeof from;
        pid_t pid;
        uid_t uid;
        ssize_t n = mdp_channel_recv(l->fd, buf, sizeof buf, got ? 0 : timeout_ms, &pid, &uid, from,
                                     &fromlen);
        if (n <= 0)
            return got;
        got++;
        if (pid <= 0 || (uid != me && uid != 0))
            continue; /* not a profiler of this user */
        handle(l, buf, pid, from, fromlen);
    }
}

void mdl_logs_list(struct mdl_logs *l)
{
    for (size_t i = 0; i < l->n; i++) {
        const struct mdl_proc *p = &l->procs[i];
        if (!p->path[0])
            continue;
        char cmd[1100];
        mdp_pct_unescape(cmd, sizeof cmd, p->cmd, strlen(p->cmd));
        for (char *c = cmd; *c; c++)
            if ((unsigned char)*c < 0x20 || *c == 0x7f)
                *c = '?';
        char state[160];
        char end[32];
        int st;
        if (p->end[0])
            snprintf(state, sizeof state, "complete (end=%s)", p->end);
        else if (kill(p->pid, 0) == 0 || errno == EPERM)
            snprintf(state, sizeof state, "still running: its log is complete when it ends");
        else if ((st = mdl_log_state(p->path, end, sizeof end)) == 2)
            snprintf(state, sizeof state, "complete (end=%s)", end);
        else if (p->write_failed)
            snprintf(state, sizeof state,
                     "incomplete: writing it failed (said above); it holds "
                     "what was written before");
        else
            snprintf(state, sizeof state,
                     "cut short (no #stats): the process ended without finishing it (killed?)");
        fprintf(stderr, "mdprofile: log %s: pid %d (%s): %s\n", p->path, (int)p->pid, cmd, state);
    }
}

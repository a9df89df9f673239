/* The mdprofile command's parts (profiler/mdprofile.c is the options and
 * main): the output path checked before anything starts (output.c), the
 * messages of the profilers it launched or attached (logs.c, over the
 * channel of core/channel.h), a program profiled from its start (run.c)
 * and a running process attached to (attach.c). */
#ifndef MDP_LAUNCH_H
#define MDP_LAUNCH_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/core.h"

#define MDP_CLSID_STRING "{1C49C441-593E-4870-856F-98DA7A9DEE94}"

/* output.c */
/* The profiler's shared object: $MDPROFILE_PROFILER, next to the program
 * in a build tree, or the installed one. 0 or -1. */
int mdl_find_profiler(char *out, size_t len);
/* path made absolute against the working directory. 0 or -1. */
int mdl_absolute(char *out, size_t len, const char *path);
/* Check that the log `path` (absolute; "%p" allowed in its last component
 * only) can be written, before the program starts: a path without %p is
 * created (or truncated) as a regular file, a directory for %p names gets
 * a probe file created and removed. 0, or -1 with a message naming the
 * path and the errno's text. */
int mdl_output_check(const char *path, char *err, size_t errlen);
/* What a log file holds, read without blocking and only if it is a regular
 * file: its first line is a header (1), and it ends with a #stats line (2:
 * complete; its end= value into end). 0: empty or no header, -1: cannot be
 * read or not a regular file. */
int mdl_log_state(const char *path, char *end, size_t endlen);
/* Remove the file mdl_output_check created at `path` when nothing was
 * written to it (a regular file, still empty): the first process was not
 * a .NET one. */
void mdl_output_unused(const char *path);

/* logs.c: what the profilers said. */
struct mdl_proc {
    pid_t pid, ppid;
    char path[4200];
    char cmd[1100];
    char end[32]; /* "" until its log is complete */
    int detached;
    int write_failed;        /* it said a write of its log failed */
    unsigned char from[112]; /* its channel address, for "stop" */
    unsigned fromlen;
};
struct mdl_logs {
    int fd;         /* the channel, -1 none */
    char name[108]; /* its abstract name ("@...") */
    struct mdl_proc *procs;
    size_t n, cap;
    unsigned notes; /* notes printed */
};
int mdl_logs_open(struct mdl_logs *l);
/* Read every message waiting (at most timeout_ms for the first); notes are
 * printed on stderr as they come. Returns how many were read. */
int mdl_logs_read(struct mdl_logs *l, int timeout_ms);
struct mdl_proc *mdl_logs_find(struct mdl_logs *l, pid_t pid);
void mdl_logs_close(struct mdl_logs *l);
/* One stderr line per log: its path, the process and its command, and
 * whether it is complete. */
void mdl_logs_list(struct mdl_logs *l);

/* run.c, attach.c */
int mdl_run(const mdp_config *cfg, char **argv);
int mdl_attach(const mdp_config *cfg, int pid);

#endif

/* Private to the log unit of profiler/core (records.c, header.c,
 * termsig.c): the log writer's state, core->writer, which the lifetime
 * above reaches through log.h's functions only (README.md, "State";
 * tools/check-layers.sh checks that only the unit's files, and core_int.h
 * for the tests, include this header). */
#ifndef MDP_LOG_STATE_H
#define MDP_LOG_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/base.h"

#define MDP_MAX_FOLDERS 64u /* folders of each list in the header and later lines */

/* Folders managed modules were loaded from, as the log names them
 * (header.c): the header's list (`frameworks=`, `folders=`), then a line
 * (`#frameworks`, `#folders`) for those first seen after it. */
struct mdp_folders {
    char *v[MDP_MAX_FOLDERS]; /* (mods_lock) */
    size_t n;                 /* (mods_lock) */
    size_t written;           /* in the header or a line so far (mods_lock) */
    size_t announced;         /* in the write being made (mods_lock) */
};

struct mdp_writer {
    /* the header's facts (mdp_writer_new) */
    char runtime[64];
    int attach;
    time_t start_wall;
    char framework[4096]; /* folder of the core library's file; "" unknown (mods_lock) */
    /* folders of loaded modules: a shared framework's, the SDK's or a
     * pack's; every other one (the application's, a plug-in's, a NuGet
     * cache's); the single-file bundle the process runs (its executable,
     * when a module came from a bundle: a path relative to it) */
    struct mdp_folders frameworks, apps, bundles;
    int bundle_tried; /* the executable looked up (mods_lock) */

    /* records.c: what the log holds so far (drain_lock) */
    int header_written;
    mdp_smap described;    /* MVIDs that have their #module line */
    uint64_t stat_records; /* record lines written */
    uint64_t last_flush_ms;
    /* a write's text, kept for the next write up to MDP_LOG_BUF_KEEP bytes:
     * a new buffer each write (mmap'd past 128 KB) was a third of the
     * drain thread's page faults */
    char *buf;
    size_t buf_cap;

    /* termsig.c: the first SIGINT, SIGTERM or SIGHUP seen (0 none), the
     * writes the signals asked for and those done; records.c: the
     * attaching mdprofile said stop */
    _Atomic int term_signal;
    _Atomic uint64_t flush_req, flush_done;
    _Atomic int stop_requested;
};

#endif

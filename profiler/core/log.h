/* Private to profiler/core: the functions of the log unit (records.c, header.c, termsig.c): the
 * incremental log writer and the termination signals that make the log whole. Included by the files
 * of this unit and of the units above it (profiler/core/README.md); struct mdp_core is in base.h,
 * the unit's own state in log_state.h.
 */
#ifndef MDP_LOG_H
#define MDP_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "core/base.h"
#include "core/aggregate.h"

/* records.c: the log's record kinds (doc/profile-log.md, "Lines"), by
 * enum mdp_rec_kind: the writer puts a record as its word, its count, the
 * fields it keeps beside the count (MDP_RECF_*), then its key (the fields
 * a key starts with, a thread and slice, then the frames); the header's
 * format is the highest of the kinds the modes write. A mode adds its
 * kind here and to the enum (base.h). tests/profiler/test_core.c checks
 * the table against doc/profile-log.md. */
#define MDP_RECF_BYTES 0x1u /* bytes (a wait's nanoseconds) after the count */
#define MDP_RECF_EXITS 0x2u /* leaves, tail calls and unwinds after the count */
struct mdp_rec_desc {
    const char *word; /* the line's first word */
    unsigned fields;  /* MDP_RECF_*: what the record holds beside its count */
    const char
        *extra;      /* every field between the count and the frames, as the document names them */
    unsigned modes;  /* the modes that write it (core.h); astack only with alloc stacks */
    unsigned format; /* the least format of a log that holds it (the header's) */
};
extern const struct mdp_rec_desc mdp_rec_kinds[MDP_REC_NKINDS];

/* records.c: append to the log what was aggregated since the last write (the header
 * first, once; the notes; each record after the #module lines of the
 * modules it names that the log has not described yet). With `end`, a
 * #stats line saying end=END follows: the last line of the log when
 * `final`, else tentative (the next write replaces it). drain_lock held.
 * 0, or -1 when the write failed (what it held stays pending). */
int mdp_log_flush(mdp_core *core, const char *end, int final);
/* The drain thread's turn after each drain (drain_lock held): a write
 * when one is due (every flush_ms, at once after a termination signal,
 * and then after every drain), messages from the launcher. */
void mdp_log_tick(mdp_core *core);
/* The unit's state (core->writer, log_state.h): the header's runtime
 * name (blanks made `_`) and whether the profiler attached, the start's
 * wall time. 0, or -1 out of memory. */
int mdp_writer_new(mdp_core *core, const char *runtime, int attach);
void mdp_writer_free(mdp_core *core);
/* Whether the attaching mdprofile said stop (the launcher's channel). */
int mdp_stop_requested(const mdp_core *core);

/* termsig.c: SIGINT, SIGTERM and SIGHUP end a profile, they do not lose
 * it. Installed once per process (chained to the handlers before);
 * mdp_termsig_attach makes `core` the one they flush. */
void mdp_termsig_attach(mdp_core *core);
void mdp_termsig_detach(mdp_core *core);
/* The first termination signal seen, 0 none. */
int mdp_term_signal(const mdp_core *core);
const char *mdp_signal_name(int sig);

/* header.c */
/* The header line (without its newline) into a malloc'ed string. */
char *mdp_header_line(mdp_core *core);
/* The folder the core library was loaded from, from its path (the
 * first one wins; mods_lock held): the header's framework=. */
void mdp_corelib_note(mdp_core *core, const char *path);
/* Note the folder a managed module was loaded from (mods_lock held): the
 * header's frameworks= when it is a shared framework's, the SDK's or a
 * pack's, its folders= otherwise (at most MDP_MAX_FOLDERS each). */
void mdp_folders_note(mdp_core *core, const char *module_path);
/* The `#frameworks` and `#folders` lines (malloc, *len bytes; NULL when
 * there are none) of the folders first seen since the header or the last
 * write that reached the log, for the write being made (records.c);
 * mdp_folders_announced then says whether it reached the log: written,
 * they are not said again; not, the next write says them again. */
char *mdp_folders_announce(mdp_core *core, size_t *len);
void mdp_folders_announced(mdp_core *core, int written);
void mdp_folders_free(mdp_core *core);
/* Whether a folder is a shared framework's (…/shared/NAME/VERSION), in
 * the SDK (…/sdk/VERSION…) or in a pack (…/packs/NAME/VERSION…). */
int mdp_framework_folder(const char *dir, size_t len);
/* "NAME VERSION" of the module with this MVID (32 hex digits), for its
 * #module line; -1 when no module has it. */
int mdp_module_describe(mdp_core *core, const char *mvid, char *out, size_t cap);
/* The process's command line, percent-encoded and cut at cap - 1 bytes
 * (with "..." then). */
void mdp_read_cmdline(char *out, size_t cap);

#endif

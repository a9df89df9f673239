/* Diagnostics of the profiler, which never writes to its host's standard
 * output or error: a note goes into the log as a `#` line (at the next
 * write; readers ignore comments) and to the mdprofile that launched or
 * attached the profiler, through the channel (channel.h); the verbose
 * diagnostics (MDPROFILE_VERBOSE) go into the log only. Pending lines are
 * bounded (MDP_NOTES_MAX bytes, the rest counted and said); a note is
 * never sent from a signal handler. */
#define _GNU_SOURCE
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/base.h"
#include "core/channel.h"

static void add(mdp_core *core, const char *text, int raw)
{
    size_t n = strlen(text);
    pthread_mutex_lock(&core->notes_lock);
    if (core->notes_len + n + 4 > MDP_NOTES_MAX) {
        core->notes_dropped++;
    } else {
        char *p = realloc(core->notes, core->notes_len + n + 4);
        if (!p) {
            core->notes_dropped++;
        } else {
            core->notes = p;
            p += core->notes_len;
            size_t h = raw ? 1 : 2;
            p[0] = '#';
            p[1] = ' ';
            /* one line each: a newline in the text would start a line that
             * is not a comment */
            for (size_t i = 0; i < n; i++)
                p[h + i] = text[i] == '\n' || text[i] == '\r' ? ' ' : text[i];
            p[h + n] = '\n';
            core->notes_len += n + h + 1;
        }
    }
    pthread_mutex_unlock(&core->notes_lock);
}

void mdp_notes_add(mdp_core *core, const char *text)
{
    add(core, text, 0);
}

void mdp_notes_add_raw(mdp_core *core, const char *text)
{
    add(core, text, 1);
}

char *mdp_notes_take(mdp_core *core, size_t *len)
{
    pthread_mutex_lock(&core->notes_lock);
    char *p = core->notes;
    *len = core->notes_len;
    uint64_t dropped = core->notes_dropped;
    core->notes = NULL;
    core->notes_len = 0;
    core->notes_dropped = 0;
    pthread_mutex_unlock(&core->notes_lock);
    if (dropped) {
        char line[96];
        int n = snprintf(line, sizeof line, "# %llu more diagnostic lines were dropped\n",
                         (unsigned long long)dropped);
        char *q = realloc(p, *len + (size_t)n + 1);
        if (q) {
            memcpy(q + *len, line, (size_t)n + 1);
            *len += (size_t)n;
            p = q;
        }
    }
    return p;
}

void mdp_notes_restore(mdp_core *core, char *lines, size_t len)
{
    pthread_mutex_lock(&core->notes_lock);
    if (core->notes_len + len > MDP_NOTES_MAX) {
        core->notes_dropped++;
        free(lines);
    } else {
        char *p = realloc(lines, len + core->notes_len + 1);
        if (p) {
            if (core->notes)
                memcpy(p + len, core->notes, core->notes_len);
            free(core->notes);
            core->notes = p;
            core->notes_len += len;
        } else {
            free(lines);
            core->notes_dropped++;
        }
    }
    pthread_mutex_unlock(&core->notes_lock);
}

void mdp_notes_free(mdp_core *core)
{
    free(core->notes);
    core->notes = NULL;
    core->notes_len = 0;
}

void mdp_channel_tell(mdp_core *core, const char *what, const char *rest)
{
    if (core->channel < 0)
        return;
    char msg[MDP_CHANNEL_MAX];
    int n = snprintf(msg, sizeof msg, "%s %d%s%s", what, core->pid, rest[0] ? " " : "", rest);
    if (n > 0)
        mdp_channel_send(core->channel, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
}

void mdp_note(mdp_core *core, const char *fmt, ...)
{
    char text[1024], enc[3 * sizeof text];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    mdp_notes_add(core, text);
    mdp_pct_escape(enc, sizeof enc, text, strlen(text));
    mdp_channel_tell(core, "note", enc);
}

void mdp_log(const mdp_core *core, const char *fmt, ...)
{
    if (!core || !core->cfg.verbose)
        return;
    /* into the log as a comment: the profiler never writes to its host's
     * standard output or error (notes.c) */
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    mdp_notes_add((mdp_core *)core, buf);
}

/* The side channel between the profiler in a profiled process and the
 * mdprofile that launched or attached it: datagrams on an abstract Unix
 * socket the launcher binds (its name travels as MDPROFILE_NOTIFY at
 * startup, as notify= in the attach request). The profiler never writes
 * to its host's standard output or error; what the user must hear (which
 * log it writes, write errors, a refused start, the end of a session)
 * goes into the log as `#` lines and through this channel. A datagram is
 * one message: nothing is read back in pieces, a full queue loses the
 * message instead of blocking the host, and the launcher checks who sent
 * it (SCM_CREDENTIALS).
 *
 * Messages (text, fields separated by one space, paths and commands
 * percent-encoded as in the log's header):
 *   profiler -> launcher
 *     log PID PPID PATH CMD    the process writes its log at PATH
 *     end PID END PATH         the log is complete: its #stats says end=END
 *     detached PID             the runtime let the profiler go (attach)
 *     note PID TEXT            a diagnostic for the user (TEXT encoded)
 *   launcher -> profiler
 *     stop                     end the attached session now */
#ifndef MDP_CHANNEL_H
#define MDP_CHANNEL_H

#include <stddef.h>
#include <sys/types.h>

#define MDP_CHANNEL_MAX 8192 /* bytes of one message */

/* Percent-encode n bytes of in (spaces, control characters, DEL and '%'
 * as %XX) into out, NUL-terminated, never splitting an escape; at most
 * cap - 1 bytes. Returns the length written. */
size_t mdp_pct_escape(char *out, size_t cap, const char *in, size_t n);
/* The reverse, into out (cap bytes, NUL-terminated); a '%' not followed
 * by two hex digits stays as it is. Returns the length. */
size_t mdp_pct_unescape(char *out, size_t cap, const char *in, size_t n);

/* Profiler side. A socket connected to the launcher's `name` ("@..."),
 * non-blocking and close-on-exec, bound to an address of its own so that
 * the launcher can answer; -1 when it cannot be made. */
int mdp_channel_connect(const char *name);
/* Send one message; never blocks, never raises SIGPIPE. 0 or -1. */
int mdp_channel_send(int fd, const char *msg, size_t len);
/* A message from the launcher, if one waits: its length, or 0. */
size_t mdp_channel_poll(int fd, char *buf, size_t cap);
/* Open, send once and close (before a profiler core exists). */
void mdp_channel_send_once(const char *name, const char *msg, size_t len);

/* Launcher side. A socket bound to a fresh abstract name (written to
 * name, "@mdprofile.PID.RANDOM"), receiving senders' credentials. fd or
 * -1 with errno. */
int mdp_channel_listen(char *name, size_t cap);
/* One message, if one waits (waiting at most timeout_ms, -1 forever):
 * its length (0 none), the sender's pid and uid (from the kernel), and its
 * address for mdp_channel_reply in from/fromlen (from: at least 110
 * bytes). -1 on error. */
ssize_t mdp_channel_recv(int fd, char *buf, size_t cap, int timeout_ms, pid_t *pid, uid_t *uid,
                         void *from, unsigned *fromlen);
int mdp_channel_reply(int fd, const void *to, unsigned tolen, const char *msg, size_t len);

#endif

/* The writer calls' recorder (trace.c), compiled in only with
 * -DMDT_IDMAP_RECORD (a benchmark build): with MDT_IDMAP_RECORD=prefix in
 * the environment, each map writes every writer call it applies, with its
 * seq, its arguments and its outcome, to prefix.<pid>.<n>.trace in the
 * trace format of tests/idmap (README.md there), in the order the map
 * applied them; bench/idmap/bench_replay replays such a file. A recorder
 * mutex, taken before the map's own and held across the call, makes the
 * file's order the order of application. */
#ifndef MDT_TOKENS_TRACE_INT_H
#define MDT_TOKENS_TRACE_INT_H

/* The body of a public writer call: `return call;`, and in a recording
 * build the call between idm_trace_enter and `trace`, a statement that
 * writes its line and may read the call's outcome as rc. */
#ifdef MDT_IDMAP_RECORD
#define IDM_TRACED(m, call, trace)                                                                 \
    do {                                                                                           \
        idm_trace_enter(m);                                                                        \
        int rc = (call);                                                                           \
        trace;                                                                                     \
        return rc;                                                                                 \
    } while (0)
#else
#define IDM_TRACED(m, call, trace) return (call)
#endif

#ifdef MDT_IDMAP_RECORD

#include <stddef.h>
#include <stdint.h>

#include <mdtools/idmap.h>

void idm_trace_open(mdt_idmap *m, const mdt_idmap_options *o);
void idm_trace_close(mdt_idmap *m);
void idm_trace_flags(mdt_idmap *m, unsigned flags);
/* Around a writer call: enter takes the recorder mutex (recursive); the
 * others write the call's line and its outcome, then release it. */
void idm_trace_enter(const mdt_idmap *m);
void idm_trace_leave(const mdt_idmap *m);
void idm_trace_module(const mdt_idmap *m, uintptr_t id, const mdt_idmap_module_info *mi,
                      uint64_t seq, int rc);
void idm_trace_class(const mdt_idmap *m, uintptr_t id, const mdt_idmap_class_info *ci, uint64_t seq,
                     int rc);
void idm_trace_function(const mdt_idmap *m, uintptr_t id, const mdt_idmap_function_info *fi,
                        uint64_t seq, int rc);
/* Unloads, code_add (a = start, b = size, c = function), code_remove
 * (a = start), retire: the event's name and its numbers. */
void idm_trace_call(const mdt_idmap *m, const char *ev, int nnum, uintptr_t a, uintptr_t b,
                    uintptr_t c, uint64_t seq, int rc);

#endif
#endif

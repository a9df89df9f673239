/* Shared by bench_sig_md.c and bench_sig_mono.c: the counters both sides
 * keep while decoding and printing every MethodDef and MemberRef signature,
 * TypeSpec and MethodSpec (ECMA-335 II.23.2), the clocks, and the one-line
 * report run.sh parses. */
#ifndef MDT_BENCH_SIG_H
#define MDT_BENCH_SIG_H

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>

struct sig_counts {
    uint64_t files;
    uint64_t methoddefs, memberrefs, typespecs, methodspecs;
    uint64_t errors; /* rows the side could not decode or print */
    uint64_t bytes;  /* length of all printed text */
};

static inline uint64_t sig_now_ns(clockid_t clk)
{
    struct timespec ts;
    clock_gettime(clk, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline void sig_report(const char *side, const struct sig_counts *c, uint64_t wall_ns,
                              uint64_t cpu_ns, uint64_t init_ns)
{
    printf("side=%s files=%" PRIu64 " methoddefs=%" PRIu64 " memberrefs=%" PRIu64
           " typespecs=%" PRIu64 " methodspecs=%" PRIu64 " sigs=%" PRIu64 " errors=%" PRIu64
           " bytes=%" PRIu64 " wall_ns=%" PRIu64 " cpu_ns=%" PRIu64 " init_ns=%" PRIu64 "\n",
           side, c->files, c->methoddefs, c->memberrefs, c->typespecs, c->methodspecs,
           c->methoddefs + c->memberrefs + c->typespecs + c->methodspecs, c->errors, c->bytes,
           wall_ns, cpu_ns, init_ns);
}

#endif

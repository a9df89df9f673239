/* The profiler core without a runtime: its ring, hash tables and settings,
 * the prolog unwinder on hand-assembled code and a fake stack, and the whole
 * path from events and injected samples to the log: aggregation, portable
 * frames with descriptors and IL offsets, the in-process names, and the
 * order of draining and unloads (a sample taken before an unload keeps its
 * name; an incarnation first met in a sample drained after its unload is
 * "unknown:unloaded"; code placed later at the same address gets its own
 * name and IL map), and images laid out with gaps, as CoreCLR lays out
 * ReadyToRun images, read in place. Runs under ASan+UBSan; needs no
 * valgrind. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <mdtools/mdtools.h>

#include "core/channel.h"
#include "core/core_int.h"
#include "core/native.h"
#include "core/unwind.h"
#include "paths.h"

#ifdef MDP_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* ---- ring ------------------------------------------------------------------ */

START_TEST(test_ring_wraps_and_keeps_order)
{
    uint64_t buf[8];
    mdp_ring r;
    mdp_ring_init(&r, buf, 8);
    uint64_t next_in = 1, next_out = 1;
    for (int round = 0; round < 200; round++) {
        uint64_t n = (uint64_t)(round % 5) + 1;
        ck_assert_uint_eq(mdp_ring_space(&r) + mdp_ring_avail(&r), 8);
        if (mdp_ring_space(&r) >= n) {
            for (uint64_t i = 0; i < n; i++)
                mdp_ring_put(&r, i, next_in++);
            mdp_ring_publish(&r, n);
        }
        uint64_t take = mdp_ring_avail(&r) > 3 ? 3 : mdp_ring_avail(&r);
        for (uint64_t i = 0; i < take; i++)
            ck_assert_uint_eq(mdp_ring_peek(&r, i), next_out + i);
        mdp_ring_consume(&r, take);
        next_out += take;
    }
    ck_assert_uint_le(next_out, next_in);
}
END_TEST

/* ---- hash tables -------------------------------------------------------------- */

START_TEST(test_pmap_matches_a_reference)
{
    enum { N = 512 };
    static void *ref[N];
    mdp_pmap m;
    mdp_pmap_init(&m);
    srand(7);
    for (int op = 0; op < 20000; op++) {
        unsigned k = (unsigned)rand() % N;
        if (rand() % 3) {
            void *v = (void *)(uintptr_t)(op + 1);
            ck_assert_int_eq(mdp_pmap_put(&m, k, k * 3, v), 0);
            ref[k] = v;
        } else {
            ck_assert_ptr_eq(mdp_pmap_del(&m, k, k * 3), ref[k]);
            ref[k] = NULL;
        }
        unsigned probe = (unsigned)rand() % N;
        ck_assert_ptr_eq(mdp_pmap_get(&m, probe, probe * 3), ref[probe]);
        ck_assert_ptr_null(mdp_pmap_get(&m, probe, probe * 3 + 1));
    }
    size_t live = 0;
    for (int i = 0; i < N; i++)
        live += ref[i] != NULL;
    ck_assert_uint_eq(m.n, live);
    mdp_pmap_free(&m);
}
END_TEST

START_TEST(test_smap_keys_are_copied)
{
    mdp_smap m;
    mdp_smap_init(&m);
    char key[32];
    for (int i = 0; i < 1000; i++) {
        snprintf(key, sizeof key, "frame %d", i);
        ck_assert_int_eq(mdp_smap_put(&m, key, strlen(key), (void *)(uintptr_t)(i + 1)), 0);
    }
    snprintf(key, sizeof key, "frame 17");
    ck_assert_ptr_eq(mdp_smap_get(&m, key, strlen(key)), (void *)18);
    ck_assert_ptr_null(mdp_smap_get(&m, "frame 1", 6));
    ck_assert_uint_eq(m.n, 1000);
    mdp_smap_free(&m);
}
END_TEST

/* ---- settings ------------------------------------------------------------------- */

START_TEST(test_config_text_round_trip)
{
    mdp_config c, d;
    char err[256], text[8192];
    mdp_config_default(&c);
    const char *in = "mode=calls;rate=250;debug_names=1;samples=4000;output=/tmp/a;b=c";
    ck_assert_int_eq(mdp_config_parse(&c, in, strlen(in), err, sizeof err), 0);
    ck_assert_uint_eq(c.modes, MDP_MODE_CALLS);
    ck_assert_uint_eq(c.rate, 250);
    ck_assert_uint_eq(c.max_samples, 4000);
    ck_assert_str_eq(c.output, "/tmp/a;b=c"); /* the path runs to the end */
    int n = mdp_config_format(&c, text, sizeof text);
    ck_assert_int_gt(n, 0);
    mdp_config_default(&d);
    ck_assert_int_eq(mdp_config_parse(&d, text, (size_t)n, err, sizeof err), 0);
    ck_assert_int_eq(memcmp(&c, &d, sizeof c), 0);
    /* the clock: adaptive by default (left unsaid in the text, so that a
     * library of the release before takes it), each other value said back
     * as it was given */
    mdp_config_default(&c);
    ck_assert_int_eq(c.clock, MDP_CLOCK_ADAPTIVE);
    static const struct {
        const char *text;
        int clock;
    } clocks[] = {{"adaptive", MDP_CLOCK_ADAPTIVE},
                  {"timer", MDP_CLOCK_TIMER},
                  {"perf", MDP_CLOCK_PERF},
                  {"auto", MDP_CLOCK_AUTO}};
    for (size_t i = 0; i < sizeof clocks / sizeof clocks[0]; i++) {
        char in2[64], want[64];
        snprintf(in2, sizeof in2, "clock=%s", clocks[i].text);
        mdp_config_default(&c);
        ck_assert_int_eq(mdp_config_parse(&c, in2, strlen(in2), err, sizeof err), 0);
        ck_assert_int_eq(c.clock, clocks[i].clock);
        ck_assert_str_eq(mdp_clock_setting(c.clock), clocks[i].text);
        n = mdp_config_format(&c, text, sizeof text);
        snprintf(want, sizeof want, ";clock=%s;", clocks[i].text);
        if (clocks[i].clock == MDP_CLOCK_ADAPTIVE)
            ck_assert_msg(!strstr(text, "clock="), "%s", text);
        else
            ck_assert_msg(strstr(text, want), "%s", text);
        mdp_config_default(&d);
        if (clocks[i].clock != MDP_CLOCK_ADAPTIVE)
            d.clock = -1; /* set by the text, not left as it was */
        ck_assert_int_eq(mdp_config_parse(&d, text, (size_t)n, err, sizeof err), 0);
        ck_assert_int_eq(d.clock, clocks[i].clock);
    }
    ck_assert_int_ne(mdp_config_parse(&d, "clock=tick", 10, err, sizeof err), 0);
    ck_assert_int_ne(mdp_config_parse(&d, "rate=0", 6, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, "rate"));
    ck_assert_int_ne(mdp_config_parse(&d, "depth=256", 9, err, sizeof err), 0);
    ck_assert_int_ne(mdp_config_parse(&d, "colour=red", 10, err, sizeof err), 0);
    ck_assert_int_ne(mdp_config_parse(&d, "mode", 4, err, sizeof err), 0);
}
END_TEST

/* Who names a missed ReadyToRun method is a setting as the others are: the
 * runtime by default, the image with r2rnames=image, from the attach
 * request's text or MDPROFILE_R2RNAMES; another value is refused. */
START_TEST(test_r2rnames_is_a_setting)
{
    mdp_config c, d;
    char err[256], text[8192];
    mdp_config_default(&c);
    ck_assert_int_eq(c.r2rnames, MDP_R2RNAMES_RUNTIME);
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, ";r2rnames=runtime;"));
    const char *in = "r2rnames=image";
    ck_assert_int_eq(mdp_config_parse(&c, in, strlen(in), err, sizeof err), 0);
    ck_assert_int_eq(c.r2rnames, MDP_R2RNAMES_IMAGE);
    int n = mdp_config_format(&c, text, sizeof text);
    ck_assert_ptr_nonnull(strstr(text, ";r2rnames=image;"));
    mdp_config_default(&d);
    ck_assert_int_eq(mdp_config_parse(&d, text, (size_t)n, err, sizeof err), 0);
    ck_assert_int_eq(d.r2rnames, MDP_R2RNAMES_IMAGE);
    ck_assert_int_ne(mdp_config_parse(&d, "r2rnames=1", 10, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, "r2rnames"));
    ck_assert_int_eq(d.r2rnames, MDP_R2RNAMES_IMAGE); /* untouched */

    mdp_config_default(&d);
    setenv("MDPROFILE_R2RNAMES", "image", 1);
    ck_assert_int_eq(mdp_config_from_env(&d, err, sizeof err), 0);
    ck_assert_int_eq(d.r2rnames, MDP_R2RNAMES_IMAGE);
    setenv("MDPROFILE_R2RNAMES", "runtime", 1);
    ck_assert_int_eq(mdp_config_from_env(&d, err, sizeof err), 0);
    ck_assert_int_eq(d.r2rnames, MDP_R2RNAMES_RUNTIME);
    setenv("MDPROFILE_R2RNAMES", "images", 1);
    ck_assert_int_ne(mdp_config_from_env(&d, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, "MDPROFILE_R2RNAMES"));
    unsetenv("MDPROFILE_R2RNAMES");
}
END_TEST

static char *slurp_src(const char *rel)
{
    char path[4096];
    FILE *f = fopen(src_path(path, sizeof path, rel), "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    static char buf[2][1 << 20];
    static int which;
    char *doc = buf[which++ & 1];
    size_t n = fread(doc, 1, sizeof buf[0] - 1, f);
    doc[n] = 0;
    fclose(f);
    return doc;
}

/* Every setting the profiler reads (the keys of the attach request's text,
 * which are the variables' too) has its MDPROFILE_ variable under
 * ENVIRONMENT in doc/mdprofile.1 and in profiler/README.md's Settings;
 * duration and samples end an attach's session (--duration, --samples). */
START_TEST(test_settings_are_documented)
{
    mdp_config c;
    char text[8192];
    mdp_config_default(&c);
    snprintf(c.notify, sizeof c.notify, "@n");
    snprintf(c.output, sizeof c.output, "o");
    c.clock = MDP_CLOCK_TIMER; /* the default clock is not formatted */
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    const char *man = slurp_src("doc/mdprofile.1");
    const char *env = strstr(man, "\n.SH ENVIRONMENT\n");
    ck_assert_ptr_nonnull(env);
    const char *env_end = strstr(env + 1, "\n.SH ");
    ck_assert_ptr_nonnull(env_end);
    const char *readme = slurp_src("profiler/README.md");
    const char *set = strstr(readme, "\n## Settings\n");
    ck_assert_ptr_nonnull(set);
    const char *set_end = strstr(set + 1, "\n## ");
    ck_assert_ptr_nonnull(set_end);
    unsigned keys = 0;
    /* first_pid is set by the launcher and never formatted: checked too */
    strcat(text, ";first_pid=0");
    for (char *k = text, *next; k && *k; k = next) {
        next = strchr(k, ';');
        if (next)
            *next++ = 0;
        char *eq = strchr(k, '=');
        ck_assert_ptr_nonnull(eq);
        *eq = 0;
        keys++;
        if (!strcmp(k, "duration") || !strcmp(k, "samples"))
            continue;
        char var[64], under[64];
        size_t i = 0;
        for (; k[i] && i < 40; i++)
            under[i] = (char)(k[i] >= 'a' && k[i] <= 'z' ? k[i] - 32 : k[i]);
        under[i] = 0;
        snprintf(var, sizeof var, "MDPROFILE_%s", under);
        const char *at = strstr(env, var);
        ck_assert_msg(at && at < env_end, "%s is not under ENVIRONMENT in doc/mdprofile.1", var);
        char tick[80];
        snprintf(tick, sizeof tick, "`_%s`", under);
        at = strstr(set, tick);
        if (!at || at > set_end) {
            snprintf(tick, sizeof tick, "`%s`", var);
            at = strstr(set, tick);
        }
        ck_assert_msg(at && at < set_end, "%s is not in profiler/README.md's Settings", var);
    }
    ck_assert_uint_ge(keys, 22);
}
END_TEST

/* --mode takes a comma list; what cannot run together, an unknown name and
 * a mode this build lacks are refused, naming the word. */
START_TEST(test_mode_lists)
{
    unsigned m = 0;
    char err[256], text[512];
    ck_assert_int_eq(mdp_mode_parse("sample,alloc", 12, &m, err, sizeof err), 0);
    ck_assert_uint_eq(m, MDP_MODE_SAMPLE | MDP_MODE_ALLOC);
    ck_assert_int_eq(mdp_mode_format(m, text, sizeof text), 12);
    ck_assert_str_eq(text, "sample,alloc");
    ck_assert_int_eq(mdp_mode_parse("alloc,sample,alloc", 18, &m, err, sizeof err), 0);
    ck_assert_uint_eq(m, MDP_MODE_SAMPLE | MDP_MODE_ALLOC);
    ck_assert_int_eq(mdp_mode_format(m, text, 12), -1); /* no room for the NUL */
    const char *bad[] = {"", ",", "sample,", "Sample", "samples", "calls,sample", "calls,alloc"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        m = 77;
        ck_assert_int_ne(mdp_mode_parse(bad[i], strlen(bad[i]), &m, err, sizeof err), 0);
        ck_assert_uint_eq(m, 77); /* untouched */
        ck_assert_uint_gt(strlen(err), 0);
    }
    ck_assert_int_ne(mdp_mode_parse("sample,bogus", 12, &m, err, sizeof err), 0);
    ck_assert_ptr_nonnull(strstr(err, "'bogus'"));
    /* every name is known; those not built say so */
    const char *all[] = {"exceptions", "wall", "contention", "heap"};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (mdp_mode_parse(all[i], strlen(all[i]), &m, err, sizeof err) != 0)
            ck_assert_ptr_nonnull(strstr(err, "not built yet"));
    /* exceptions and contention are built, and combine with sampling */
    ck_assert_int_eq(mdp_mode_parse("sample,exceptions,contention", 28, &m, err, sizeof err), 0);
    ck_assert_uint_eq(m, MDP_MODE_SAMPLE | MDP_MODE_EXCEPTIONS | MDP_MODE_CONTENTION);
    /* the environment's and the attach text's forms */
    mdp_config c;
    mdp_config_default(&c);
    ck_assert_int_eq(mdp_config_parse(&c, "mode=alloc,sample", 17, err, sizeof err), 0);
    ck_assert_uint_eq(c.modes, MDP_MODE_SAMPLE | MDP_MODE_ALLOC);
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, "mode=sample,alloc;"));
    /* wall mode: its budget goes through the attach text; sample and
     * wall exclude each other (one timer per thread) */
    ck_assert_int_eq(mdp_config_parse(&c, "mode=wall;wall_budget=500", 25, err, sizeof err), 0);
    ck_assert_uint_eq(c.modes, MDP_MODE_WALL);
    ck_assert_uint_eq(c.wall_budget, 500);
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, "mode=wall;"));
    ck_assert_ptr_nonnull(strstr(text, ";wall_budget=500;"));
    ck_assert_int_ne(mdp_mode_parse("sample,wall", 11, &m, err, sizeof err), 0);
    ck_assert_int_ne(mdp_config_parse(&c, "wall_budget=0", 13, err, sizeof err), 0);
    /* alloc stacks' path: auto by default, callback through the attach
     * text too; another word is refused */
    ck_assert_int_eq(c.alloc_path, MDP_ALLOC_PATH_AUTO);
    ck_assert_int_eq(mdp_config_parse(&c, "alloc_path=callback", 19, err, sizeof err), 0);
    ck_assert_int_eq(c.alloc_path, MDP_ALLOC_PATH_CALLBACK);
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, ";alloc_path=callback;"));
    ck_assert_int_ne(mdp_config_parse(&c, "alloc_path=event", 16, err, sizeof err), 0);
    /* where ReadyToRun code's IL maps come from: the image by default,
     * check and runtime through the attach text too, kept by the format */
    ck_assert_int_eq(c.ilmaps, MDP_ILMAPS_IMAGE);
    ck_assert_int_eq(mdp_config_parse(&c, "ilmaps=check", 12, err, sizeof err), 0);
    ck_assert_int_eq(c.ilmaps, MDP_ILMAPS_CHECK);
    ck_assert_int_gt(mdp_config_format(&c, text, sizeof text), 0);
    ck_assert_ptr_nonnull(strstr(text, ";ilmaps=check;"));
    ck_assert_int_eq(mdp_config_parse(&c, "ilmaps=runtime", 14, err, sizeof err), 0);
    ck_assert_int_eq(c.ilmaps, MDP_ILMAPS_RUNTIME);
    ck_assert_int_ne(mdp_config_parse(&c, "ilmaps=both", 11, err, sizeof err), 0);
}
END_TEST

/* ---- the prolog unwinder ----------------------------------------------------------- */

/* A fake thread stack: words[] at a known address. */
static uintptr_t stack_words[64];
#define SW(i) ((uintptr_t)&stack_words[i])
#define LO SW(0)
#define HI (SW(63) + 8)

START_TEST(test_prolog_decode_shapes)
{
    mdp_prolog p;
    /* tier-0: push rbp; sub rsp, 16; lea rbp, [rsp+0x10] */
    static const uint8_t t0[] = {0x55, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8d, 0x6c, 0x24, 0x10, 0x90};
    ck_assert_int_eq(mdp_prolog_decode(&p, t0, sizeof t0), 0);
    ck_assert_int_eq(p.framed, 1);
    ck_assert_uint_eq(p.end, 10);
    ck_assert_int_eq(p.rbp_above_sp, 0x10);
    /* optimized, RSP frame: push rbx; push rax; body */
    static const uint8_t rs[] = {0x53, 0x50, 0xe8, 0, 0, 0, 0};
    ck_assert_int_eq(mdp_prolog_decode(&p, rs, sizeof rs), 0);
    ck_assert_int_eq(p.framed, 0);
    ck_assert_uint_eq(p.size, 16);
    ck_assert_int_eq(p.rbp_slot, 0);
    /* RSP frame pushing RBP as an ordinary register, then sub rsp, 0x28 */
    static const uint8_t rb[] = {0x41, 0x57, 0x55, 0x48, 0x83, 0xec, 0x28, 0xcc};
    ck_assert_int_eq(mdp_prolog_decode(&p, rb, sizeof rb), 0);
    ck_assert_int_eq(p.framed, 0);
    ck_assert_uint_eq(p.size, 0x38);
    ck_assert_int_eq(p.rbp_slot, 16);
    /* lea rbp that does not point at the saved RBP: not understood */
    static const uint8_t odd[] = {0x55, 0x53, 0x48, 0x8d, 0x6c, 0x24, 0x00};
    ck_assert_int_eq(mdp_prolog_decode(&p, odd, sizeof odd), -1);
    /* OSR prologs: "push rax; mov rbp, rsp" and "mov rax, [rbp]; push rax;
     * sub rsp, 0x70; (a spill); lea rbp, [rsp+0x70]" */
    static const uint8_t osr[] = {0x50, 0x48, 0x89, 0xe5, 0x90};
    ck_assert_int_eq(mdp_prolog_decode(&p, osr, sizeof osr), 0);
    ck_assert_int_eq(p.osr, 1);
    ck_assert_uint_eq(p.end, 4);
    static const uint8_t osr2[] = {0x48, 0x8b, 0x45, 0x00, 0x50, 0x48, 0x83, 0xec, 0x70,
                                   0x4c, 0x89, 0xbc, 0x24, 0x28, 0x01, 0x00, 0x00, 0x48,
                                   0x8d, 0x6c, 0x24, 0x70, 0x90, 0x90, 0x90, 0x90};
    ck_assert_int_eq(mdp_prolog_decode(&p, osr2, sizeof osr2), 0);
    ck_assert_int_eq(p.osr, 1);
    ck_assert_uint_eq(p.end, 22);
    /* nothing a prolog does first: not understood (it used to pass for a
     * frame of size 0, and stale return addresses were read) */
    static const uint8_t other[] = {0x8b, 0x47, 0x08, 0xc3};
    ck_assert_int_eq(mdp_prolog_decode(&p, other, sizeof other), -1);
}
END_TEST

START_TEST(test_unwind_rsp_frame_body_and_prolog)
{
    /* push rax; call x; inc rax; add rsp, 8; ret */
    static const uint8_t code[] = {0x50, 0xe8, 0,    0,    0,    0,    0x48,
                                   0xff, 0xc0, 0x48, 0x83, 0xc4, 0x08, 0xc3};
    uintptr_t base = (uintptr_t)code;
    memset(stack_words, 0, sizeof stack_words);
    stack_words[11] = 0x4242; /* return address, one word above rsp */
    mdp_uw caller, f = {base + 6, SW(10), 0x7777};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x4242);
    ck_assert_uint_eq(caller.sp, SW(12));
    ck_assert_uint_eq(caller.fp, 0x7777); /* RBP untouched by an RSP frame */
    /* at the first instruction: nothing pushed yet */
    stack_words[10] = 0x5151;
    f = (mdp_uw){base, SW(10), 0x7777};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x5151);
    /* in the epilog at add rsp, 8: one word to pop, then ret */
    f = (mdp_uw){base + 9, SW(10), 0x7777};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x4242);
    /* at ret */
    f = (mdp_uw){base + 13, SW(11), 0x7777};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x4242);
    /* a return address read from outside the stack is refused */
    f = (mdp_uw){base + 6, HI - 8, 0x7777};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 0);
}
END_TEST

START_TEST(test_unwind_osr_frame_asks_for_a_scan)
{
    static const uint8_t code[] = {0x50, 0x48, 0x89, 0xe5, 0x90, 0x90, 0x58, 0xc3};
    uintptr_t base = (uintptr_t)code;
    memset(stack_words, 0, sizeof stack_words);
    stack_words[20] = SW(40); /* the tier-0 frame's saved RBP, copied */
    stack_words[21] = 0x1234; /* stale */
    mdp_uw caller, f = {base + 4, SW(20), SW(20)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 3);
    ck_assert_uint_eq(caller.fp, SW(40));
    /* inside its prolog: not understood */
    f = (mdp_uw){base + 1, SW(21), SW(30)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 0);
    /* at its first instruction too: it was jumped to, and the word at RSP
     * is the patchpoint call's return into its own tier-0 frame (a wrong
     * caller once in ~1,400 samples of handler.sh's OSR loop) */
    stack_words[22] = 0x7070;
    f = (mdp_uw){base, SW(22), SW(30)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 0);
}
END_TEST

/* The tier-0 frame record under an OSR frame comes from the tier-0 prolog,
 * not from the first word up the stack that holds the saved RBP: the
 * tier-0 frame's slots hold a stale record of an earlier OSR call made
 * from the same caller (same saved RBP, a return address elsewhere). */
START_TEST(test_osr_tier0_record_from_the_prolog)
{
    /* tier-0: push rbp; sub rsp, 0x30; lea rbp, [rsp+0x30] */
    static const uint8_t t0[] = {0x55, 0x48, 0x83, 0xec, 0x30, 0x48, 0x8d, 0x6c, 0x24, 0x30, 0x90};
    /* push rbp; mov rbp, rsp; sub rsp, 0x30: where RSP ends is not decoded */
    static const uint8_t mov[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x83, 0xec, 0x30, 0x90};
    memset(stack_words, 0, sizeof stack_words);
    /* OSR record at word 10: {saved RBP, return into tier-0}; the tier-0
     * frame's RSP is word 12, its record at word 12 + 0x30/8 = 18 */
    stack_words[10] = SW(40);
    stack_words[11] = 0x7070;
    stack_words[14] = SW(40); /* stale: an earlier OSR call's record */
    stack_words[15] = 0x5050;
    stack_words[18] = SW(40);
    stack_words[19] = 0x6060; /* the real return address */
    ck_assert_uint_eq(mdp_osr_tier0_record(SW(10), SW(40), t0, sizeof t0, LO, HI), SW(18));
    ck_assert_uint_eq(mdp_osr_tier0_record(SW(10), SW(40), mov, sizeof mov, LO, HI), 0);
    /* the record found must hold the saved RBP */
    stack_words[18] = SW(41);
    ck_assert_uint_eq(mdp_osr_tier0_record(SW(10), SW(40), t0, sizeof t0, LO, HI), 0);
    /* nor may it lie outside the stack */
    ck_assert_uint_eq(mdp_osr_tier0_record(SW(60), SW(40), t0, sizeof t0, LO, HI), 0);
}
END_TEST

START_TEST(test_unwind_rbp_frame_and_pop_rbp)
{
    /* push rbp; mov rbp, rsp; nop; pop rbp; ret */
    static const uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x5d, 0xc3};
    uintptr_t base = (uintptr_t)code;
    memset(stack_words, 0, sizeof stack_words);
    stack_words[20] = SW(40); /* saved RBP */
    stack_words[21] = 0x6060; /* return address */
    mdp_uw caller, f = {base + 4, SW(18), SW(20)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 0, LO, HI), 2);
    ck_assert_uint_eq(caller.ip, 0x6060);
    ck_assert_uint_eq(caller.sp, SW(22));
    ck_assert_uint_eq(caller.fp, SW(40));
    /* leaf at pop rbp: RBP comes back from the stack, then ret */
    f = (mdp_uw){base + 5, SW(20), SW(20)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x6060);
    ck_assert_uint_eq(caller.fp, SW(40));
    /* leaf right after push rbp: the return address is one word up */
    f = (mdp_uw){base + 1, SW(20), SW(40)};
    ck_assert_int_eq(mdp_unwind_managed(&caller, &f, code, sizeof code, 1, LO, HI), 1);
    ck_assert_uint_eq(caller.ip, 0x6060);
    ck_assert_uint_eq(caller.fp, SW(40));
}
END_TEST

/* A return address follows a call: the forms CoreCLR's code calls with,
 * and what sits before a function's start or after other instructions. */
START_TEST(test_follows_call_forms)
{
    static const struct {
        uint8_t b[8];
        size_t n;
        int call;
    } cases[] = {
        {{0xe8, 1, 2, 3, 4}, 5, 1},                   /* call rel32 */
        {{0xff, 0x15, 1, 2, 3, 4}, 6, 1},             /* call [rip+disp32] (R2R cells) */
        {{0xff, 0xd0}, 2, 1},                         /* call rax */
        {{0x41, 0xff, 0xd3}, 3, 1},                   /* call r11 */
        {{0xff, 0x50, 0x18}, 3, 1},                   /* call [rax+0x18] */
        {{0x41, 0xff, 0x53, 0x08}, 4, 1},             /* call [r11+8] */
        {{0xff, 0x90, 1, 2, 3, 4}, 6, 1},             /* call [rax+disp32] */
        {{0xff, 0x14, 0x24}, 3, 1},                   /* call [rsp] (SIB) */
        {{0xff, 0x54, 0x24, 0x08}, 4, 1},             /* call [rsp+8] */
        {{0x48, 0xff, 0x94, 0xc1, 1, 2, 3, 4}, 8, 1}, /* call [rcx+rax*8+disp32] */
        {{0xff, 0x14, 0xc5, 1, 2, 3, 4}, 7, 1},       /* call [rax*8+disp32] (no base) */
        {{0x90, 0x90, 0x90}, 3, 0},                   /* nops */
        {{0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc}, 8, 0}, /* padding: a function start */
        {{0x48, 0x83, 0xc4, 0x28, 0xc3}, 5, 0},                   /* add rsp, 0x28; ret */
        {{0xff, 0x25, 1, 2, 3, 4}, 6, 0},                         /* jmp [rip+disp32]: no return */
        {{0xff, 0xe0}, 2, 0},                                     /* jmp rax */
        {{0x15, 1, 2, 3, 4}, 5, 0},                               /* a call's tail without its FF */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint8_t buf[16];
        memset(buf, 0x90, sizeof buf); /* nops before: no call there */
        memcpy(buf + sizeof buf - cases[i].n, cases[i].b, cases[i].n);
        ck_assert_msg(mdp_follows_call(buf + sizeof buf, 8) == cases[i].call, "case %zu", i);
    }
    /* only the bytes said to be readable are considered */
    static const uint8_t ff15[] = {0xff, 0x15, 1, 2, 3, 4};
    ck_assert_int_eq(mdp_follows_call(ff15 + sizeof ff15, 6), 1);
    ck_assert_int_eq(mdp_follows_call(ff15 + sizeof ff15, 5), 0);
    ck_assert_int_eq(mdp_follows_call(ff15 + sizeof ff15, 0), 0);
}
END_TEST

/* ---- events, samples, log ----------------------------------------------------------- */

static int il_phase;

static int fake_il_map(void *payload, uintptr_t code_start, struct mdp_il_entry *out, size_t cap)
{
    if (code_start != 0x10000)
        return 0;
    struct mdp_il_entry e[3] = {
        {MDP_IL_PROLOG, 0, 8}, {il_phase ? 0x7 : 0x5, 8, 0x40}, {0x9, 0x40, 0x100}};
    for (size_t i = 0; i < 3 && i < cap; i++)
        out[i] = e[i];
    return 3;
}

static int fake_miss(void *payload, int kind, uintptr_t id)
{
    return MDT_ENOTFOUND;
}

struct env {
    mdp_core *core;
    struct mdp_slot *slot;
    char log[256];
    char mvid[33];
    void *file;
    size_t file_len;
};

static void inject(struct env *e, size_t n, const uintptr_t *ips, const uintptr_t *fns,
                   const uint64_t *gens)
{
    mdp_ring *r = &e->slot->ring;
    ck_assert_uint_ge(mdp_ring_space(r), 1 + 3 * n);
    mdp_ring_put(r, 0, MDP_SAMPLE_HDR(n, 0, 1));
    for (size_t i = 0; i < n; i++) {
        mdp_ring_put(r, 1 + 3 * i, ips[i]);
        mdp_ring_put(r, 2 + 3 * i, fns[i]);
        mdp_ring_put(r, 3 + 3 * i, gens[i]);
    }
    mdp_ring_publish(r, 1 + 3 * n);
}

/* A sample of native frames only, with the thread's activity in its flags. */
static void inject_act(struct env *e, size_t n, const uintptr_t *ips, unsigned act)
{
    mdp_ring *r = &e->slot->ring;
    ck_assert_uint_ge(mdp_ring_space(r), 1 + 3 * n);
    mdp_ring_put(r, 0, MDP_SAMPLE_HDR(n, act << 4, 1));
    for (size_t i = 0; i < n; i++) {
        mdp_ring_put(r, 1 + 3 * i, ips[i]);
        mdp_ring_put(r, 2 + 3 * i, 0);
        mdp_ring_put(r, 3 + 3 * i, 0);
    }
    mdp_ring_publish(r, 1 + 3 * n);
}

static uint64_t gen_of(mdp_core *core, uintptr_t fn)
{
    mdt_idmap_function_info fi;
    ck_assert_int_eq(mdt_idmap_function_lookup(&fi, NULL, 0, mdp_core_map(core), fn, 0), 0);
    return fi.gen;
}

/* fn loaded as fi, its code recorded as regions, then one sample at ip. */
static void sample_new_code(struct env *e, uintptr_t fn, const mdt_idmap_function_info *fi,
                            const mdp_code_region *regions, size_t n, uintptr_t ip)
{
    ck_assert_int_ge(mdp_ev_function_load(e->core, mdp_seq(e->core), fn, fi), 0);
    ck_assert_int_eq(mdp_ev_code(e->core, mdp_seq(e->core), fn, regions, n), 0);
    uint64_t gen = gen_of(e->core, fn);
    inject(e, 1, &ip, &fn, &gen);
}

static char *slurp_raw(const char *path)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char buf[16384];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/* The log with every stack record's thread and slice (format 4: "stack
 * COUNT TID SLICE FRAMES") taken out, so that the tests of what a record's
 * frames say read "stack COUNT FRAMES" whatever thread injected them and
 * however long they ran (test_thread_and_slice checks the two). */
static char *slurp(const char *path)
{
    char *buf = slurp_raw(path), *w = buf;
    for (const char *r = buf; *r;) {
        int line_start = r == buf || r[-1] == '\n';
        *w++ = *r++;
        if (line_start && !strncmp(r - 1, "stack ", 6)) {
            /* copy "tack COUNT ", then skip two numbers */
            memmove(w, r, 5);
            w += 5, r += 5;
            while (*r >= '0' && *r <= '9')
                *w++ = *r++;
            if (*r == ' ')
                *w++ = *r++;
            for (int k = 0; k < 2; k++) {
                const char *q = r;
                while (*q >= '0' && *q <= '9')
                    q++;
                if (q > r && *q == ' ')
                    r = q + 1;
            }
        }
    }
    *w = 0;
    return buf;
}

enum {
    MOD = 0x5000,
    C_LEAF = 0xc100,
    F_CTOR = 0xf100,
    F_MAKE = 0xf200,
    F_LATE = 0xf300,
    F_SPARE = 0xf400
};

/* A file mapped read-only, as a loader would have it (flat). */
static void *map_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
    struct stat st;
    fstat(fd, &st);
    *len = (size_t)st.st_size;
    void *p = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    ck_assert_ptr_ne(p, MAP_FAILED);
    return p;
}

/* drain_ms: 0 for a drain thread that never drains on its own (only the
 * test drains); max_samples: the session's end (attach), 0 for none. */
/* the sampler's clock of the cores open_env makes: the default's
 * (adaptive: the timer, perf for a thread it serves badly), auto for the
 * perf clock's test, timer for the timer alone */
static int env_clock = MDP_CLOCK_ADAPTIVE;

static void open_env_cfg(struct env *e, int debug_names, unsigned drain_ms, unsigned max_samples)
{
    char path[1024];
    e->file = map_file(src_path(path, sizeof path, "data/Everything.dll"), &e->file_len);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "Everything.dll", e->file, e->file_len, 0),
                     0);
    uint8_t mv[16];
    ck_assert_int_eq(mdt_image_mvid(mv, img), 0);
    mdp_mvid_hex(e->mvid, mv);
    mdt_image_close(img);

    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.clock = env_clock;
    cfg.debug_names = debug_names;
    cfg.drain_ms = drain_ms ? drain_ms : 600000;
    cfg.max_samples = max_samples;
    snprintf(e->log, sizeof e->log, "/tmp/mdp-test-core-%d.log", (int)getpid());
    /* a file left by a failed run of the same pid would make the core write
     * beside it (a further process's log) and the test read the stale one */
    unlink(e->log);
    snprintf(cfg.output, sizeof cfg.output, "%s", e->log);
    mdp_runtime_ops ops = {.miss = fake_miss, .il_map = fake_il_map};
    char err[256] = "";
    ck_assert_msg(mdp_core_new(&e->core, &cfg, &ops, "test", 0, err, sizeof err) == 0, "%s", err);
    /* a sampler slot fed by hand, no timer */
    e->slot = &e->core->slots[0];
    mdp_slots_take(1);
    e->slot->ringbuf =
        mmap(NULL, 4096 * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    mdp_ring_init(&e->slot->ring, e->slot->ringbuf, 4096);
    atomic_store(&e->slot->tid, (int)syscall(SYS_gettid));
    atomic_store(&e->slot->state, SLOT_ACTIVE);
}

static void open_env(struct env *e, int debug_names)
{
    open_env_cfg(e, debug_names, 0, 0);
}

static void close_env(struct env *e)
{
    mdp_core_free(e->core);
    unlink(e->log);
    munmap(e->file, e->file_len);
}

static void load_everything(struct env *e, mdp_core *core)
{
    mdp_module_desc d = {.base = e->file, .path = "Everything.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD, &d), 0);
}

START_TEST(test_samples_to_log_across_an_unload)
{
    struct env e;
    open_env(&e, 1);
    mdp_core *core = e.core;
    load_everything(&e, core);
    /* primitives as pseudo classes (the adapter's way for array elements) */
    uintptr_t C_I4 = mdp_ev_prim_class(core, mdp_seq(core), 0x08);
    uintptr_t C_STR = mdp_ev_prim_class(core, mdp_seq(core), 0x0e);
    ck_assert_uint_ne(C_I4, 0);
    ck_assert_uint_ne(C_STR, 0);
    ck_assert_uint_eq(mdp_ev_prim_class(core, mdp_seq(core), 0x12), 0); /* CLASS: not a primitive */
    /* Outer+Generic+Leaf<int,string> and its .ctor; GenericMethods.Make<int> */
    uintptr_t leaf_args[2] = {C_I4, C_STR};
    mdt_idmap_class_info leaf = {.module = MOD,
                                 .token = 0x0200001c,
                                 .shape = MDT_IDMAP_SHAPE_TYPEDEF,
                                 .nargs = 2,
                                 .args = leaf_args};
    ck_assert_int_ge(mdp_ev_class_load(core, mdp_seq(core), C_LEAF, &leaf), 0);
    mdt_idmap_function_info ctor = {.module = MOD, .token = 0x06000031, .class_id = C_LEAF};
    uintptr_t make_args[1] = {C_I4};
    mdt_idmap_function_info make = {
        .module = MOD, .token = 0x06000037, .nargs = 1, .args = make_args};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_CTOR, &ctor), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_SPARE, &ctor), 0);
    mdp_code_region r1 = {0x10000, 0x100}, r2 = {0x20000, 0x80}, r3 = {0x40000, 0x40};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_CTOR, &r1, 1), 0);
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_SPARE, &r3, 1), 0);
    uint64_t g_ctor = gen_of(core, F_CTOR), g_make = gen_of(core, F_MAKE);
    uint64_t g_spare = gen_of(core, F_SPARE);

    /* three samples: .ctor at IL 0x5 called from Make; one at an address
     * nobody reported (no shared object there: a stub) */
    uintptr_t ips[2] = {0x10010, 0x20010}, fns[2] = {F_CTOR, F_MAKE};
    uint64_t gens[2] = {g_ctor, g_make};
    for (int i = 0; i < 3; i++)
        inject(&e, 2, ips, fns, gens);
    uintptr_t stray = 0x30000, none = 0;
    uint64_t nogen = 0;
    inject(&e, 1, &stray, &none, &nogen);

    /* the module unloads: those samples are drained first and keep names */
    ck_assert_int_ge(mdp_ev_module_unload(core, mdp_seq(core), MOD), 0);
    ck_assert_uint_eq(mdp_ring_avail(&e.slot->ring), 0);
    /* a sample naming unloaded code no earlier sample named */
    uintptr_t spare_ip = 0x40004, spare_fn = F_SPARE;
    inject(&e, 1, &spare_ip, &spare_fn, &g_spare);
    /* new code at the same address: another incarnation, another IL map */
    load_everything(&e, core);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_LATE, &make), 0);
    il_phase = 1;
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_LATE, &r1, 1), 0);
    uintptr_t late_fn = F_LATE;
    uint64_t late_gen = gen_of(core, F_LATE);
    inject(&e, 1, ips, &late_fn, &late_gen);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);

    char *log = slurp(e.log);
    char want[1024];
    ck_assert_msg(strncmp(log, "#mdprofile 4 runtime=test pid=", 30) == 0, "%s", log);
    snprintf(want, sizeof want,
             "\nstack 3 %s:0x06000031{I4,STRING}@0x5 %s:0x06000037<I4>"
             "\tEverything.Outer+Generic+Leaf<System.Int32,System.String>::.ctor"
             "\tEverything.GenericMethods::Make<System.Int32>\n",
             e.mvid, e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    ck_assert_msg(strstr(log, "\nstack 1 stub\tstub\n"), "%s", log);
    ck_assert_msg(strstr(log, "\nstack 1 unknown:unloaded\tunknown:unloaded\n"), "%s", log);
    snprintf(want, sizeof want,
             "\nstack 1 %s:0x06000037<I4>@0x7\tEverything.GenericMethods::Make<System.Int32>\n",
             e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    ck_assert_msg(strstr(log, "\n#stats samples=6 records=4 frames=9 managed=7 native=0 dynamic=0 "
                              "stub=1 unknown=1 unknown.unmapped=0 unknown.unloaded=1 "
                              "unknown.nomvid=0 drops=0 "),
                  "%s", log);
    close_env(&e);
}
END_TEST

/* A class ID the runtime gives another class after an unload names the
 * new class in frames named after it: the drain keeps classes' descriptor
 * texts per ID (frames.c), and an unload must drop them. */
START_TEST(test_class_id_reused_after_an_unload_names_the_new_class)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    uintptr_t C_I4 = mdp_ev_prim_class(core, mdp_seq(core), 0x08);
    uintptr_t C_STR = mdp_ev_prim_class(core, mdp_seq(core), 0x0e);
    /* GenericMethods.Make<Outer+Generic+Leaf<int,string>> */
    uintptr_t args[2] = {C_I4, C_STR};
    mdt_idmap_class_info leaf = {.module = MOD,
                                 .token = 0x0200001c,
                                 .shape = MDT_IDMAP_SHAPE_TYPEDEF,
                                 .nargs = 2,
                                 .args = args};
    ck_assert_int_ge(mdp_ev_class_load(core, mdp_seq(core), C_LEAF, &leaf), 0);
    uintptr_t make_args[1] = {C_LEAF};
    mdt_idmap_function_info make = {
        .module = MOD, .token = 0x06000037, .nargs = 1, .args = make_args};
    mdp_code_region r1 = {0x20000, 0x80}, r2 = {0x50000, 0x80};
    sample_new_code(&e, F_MAKE, &make, &r1, 1, 0x20010);
    mdp_drain_all(core);

    /* the class unloads; its ID comes back as Leaf<string,int> */
    ck_assert_int_ge(mdp_ev_class_unload(core, mdp_seq(core), C_LEAF), 0);
    args[0] = C_STR;
    args[1] = C_I4;
    ck_assert_int_ge(mdp_ev_class_load(core, mdp_seq(core), C_LEAF, &leaf), 0);
    sample_new_code(&e, F_LATE, &make, &r2, 1, 0x50010);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);

    char *log = slurp(e.log);
    char want[512];
    snprintf(want, sizeof want, "\nstack 1 %s:0x06000037<%s:0x0200001c<I4,STRING>>", e.mvid,
             e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    snprintf(want, sizeof want, "\nstack 1 %s:0x06000037<%s:0x0200001c<STRING,I4>>", e.mvid,
             e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    close_env(&e);
}
END_TEST

/* A version of two regions (hot and cold, codemap.c): a sample in the cold
 * part gets the IL offset of its place in the whole version, from the
 * version's map, not a map of the cold part's own; code of one region
 * placed later where the cold part was, after an unload, is its own
 * version (fake_il_map has no map for it). */
START_TEST(test_split_version_names_its_cold_part)
{
    struct env e;
    open_env(&e, 1);
    mdp_core *core = e.core;
    load_everything(&e, core);
    il_phase = 0;
    uintptr_t C_I4 = mdp_ev_prim_class(core, mdp_seq(core), 0x08);
    uintptr_t make_args[1] = {C_I4};
    mdt_idmap_function_info make = {
        .module = MOD, .token = 0x06000037, .nargs = 1, .args = make_args};
    mdp_code_region parts[2] = {{0x10000, 0x40}, {0x60000, 0xc0}};
    sample_new_code(&e, F_MAKE, &make, parts, 2, 0x60010); /* 0x50 into the version: IL 0x9 */
    uintptr_t fn = F_MAKE, ip = 0x10010;                   /* IL 0x5 */
    uint64_t gen = gen_of(core, F_MAKE);
    inject(&e, 1, &ip, &fn, &gen);
    ck_assert_int_ge(mdp_ev_module_unload(core, mdp_seq(core), MOD), 0);
    load_everything(&e, core);
    mdp_code_region whole = {0x60000, 0x40};
    sample_new_code(&e, F_LATE, &make, &whole, 1, 0x60010);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);

    char *log = slurp(e.log);
    char want[512];
    const char *ils[3] = {"@0x9", "@0x5", ""};
    for (int i = 0; i < 3; i++) {
        snprintf(want, sizeof want, "\nstack 1 %s:0x06000037<I4>%s\t", e.mvid, ils[i]);
        ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    }
    close_env(&e);
}
END_TEST

/* Without force, a retirement (a rebuild of every table) waits, after its
 * 10 s, until the tombstones are an eighth of the live records: one
 * unload among the Everything module's records is not worth a rebuild,
 * enough of them are. */
START_TEST(test_retire_waits_for_enough_tombstones)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info fi = {.module = MOD, .token = 0x06000031};
    for (unsigned i = 0; i < 40; i++)
        ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), 0xfd000 + 8 * i, &fi), 0);
    mdt_idmap_stats st;
    mdt_idmap_stats_get(&st, core->map);
    size_t live = st.modules_live + st.classes_live + st.functions_live;
    ck_assert_uint_ge(live, 40);
    /* functions the map never saw, unloaded: a tombstone each */
    ck_assert_int_ge(mdp_ev_function_unload(core, mdp_seq(core), 0xfe000), 0);
    /* 10 s went by since the last retirement (unsigned: the difference is
     * what is compared) */
    core->life->retire_last_ms = mdp_elapsed_ms(core) - 10001;
    ck_assert_int_eq(mdp_core_retire(core, 0, 0), 0);
    mdt_idmap_stats_get(&st, core->map);
    ck_assert_uint_eq(st.functions_dead, 1);
    size_t n = 1;
    for (; n < live / 8; n++)
        ck_assert_int_ge(mdp_ev_function_unload(core, mdp_seq(core), 0xfe000 + 8 * n), 0);
    /* the last look was just now: not again for 10 s */
    ck_assert_int_eq(mdp_core_retire(core, 0, 0), 0);
    core->life->retire_last_ms = mdp_elapsed_ms(core) - 10001;
    ck_assert_int_eq(mdp_core_retire(core, 0, 0), (int)n);
    mdt_idmap_stats_get(&st, core->map);
    ck_assert_uint_eq(st.functions_dead, 0);
    close_env(&e);
}
END_TEST

/* Tombstones are retired only below every seq still in use: a callback
 * that took its seq before an unload (a fake one: a held seq) keeps the
 * unloaded function's tombstone, which refuses that callback's late load;
 * once it returns, the tombstone goes. The adapter's deferred seqs (floor)
 * count as in use; a taker that found every slot taken stops retirement. */
START_TEST(test_retire_waits_for_a_callback_in_flight)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info fi = {.module = MOD, .token = 0x06000031};
    mdt_idmap_stats st;
    {
        MDP_SEQ_HELD(early, core); /* a callback in flight, from before the unload */
        ck_assert_uint_eq(mdp_seq_watermark(core, 0), early);
        ck_assert_uint_eq(mdp_seq_watermark(core, early - 1), early - 1);
        /* a function the map never saw, unloaded: a tombstone */
        ck_assert_int_ge(mdp_ev_function_unload(core, mdp_seq(core), F_SPARE), 0);
        mdt_idmap_stats_get(&st, core->map);
        ck_assert_uint_eq(st.functions_dead, 1);
        ck_assert_int_eq(mdp_core_retire(core, 0, 1), 0);
        mdt_idmap_stats_get(&st, core->map);
        ck_assert_uint_eq(st.functions_dead, 1);
        /* the late load of the callback in flight is refused, not revived */
        ck_assert_int_eq(mdp_ev_function_load(core, early, F_SPARE, &fi), MDT_IDMAP_SUPERSEDED);
        mdt_idmap_function_info out;
        ck_assert_int_ne(mdt_idmap_function_lookup(&out, NULL, 0, core->map, F_SPARE, 0), 0);
        /* a deferred seq older than every held one holds retirement too */
        ck_assert_int_eq(mdp_core_retire(core, 1, 1), 0);
    }
    /* every slot taken, and one more: no watermark above 1 */
    mdp_seq_hold h[MDP_SEQ_SLOTS + 1];
    for (unsigned i = 0; i < MDP_SEQ_SLOTS + 1; i++)
        h[i] = mdp_seq_take(core);
    ck_assert_int_lt(h[MDP_SEQ_SLOTS].slot, 0);
    ck_assert_uint_eq(mdp_seq_watermark(core, 0), 1);
    ck_assert_int_eq(mdp_core_retire(core, 0, 1), 0);
    for (unsigned i = 0; i < MDP_SEQ_SLOTS + 1; i++)
        mdp_seq_release(&h[i]);
    /* nothing in flight: the tombstone goes (mdp_core_retire without force
     * would wait for more unloads or 10 s) */
    ck_assert_int_eq(mdp_core_retire(core, 0, 0), 0);
    ck_assert_int_eq(mdp_core_retire(core, 0, 1), 1);
    mdt_idmap_stats_get(&st, core->map);
    ck_assert_uint_eq(st.functions_dead, 0);
    close_env(&e);
}
END_TEST

/* The SIGPROF handler on this very thread, with a ring that has room for a
 * walk of 33 frames but not for one of max_depth (255): the sample is
 * dropped and counted, not cut short to what fits (a cut stack looks whole,
 * its root some caller). A timer on this thread's CPU clock sends the
 * signal, as the sampler's own would; the slot is the hand-fed one, with
 * this thread's stack bounds so that the handler walks. */
START_TEST(test_sample_without_room_is_dropped)
{
    struct env e;
    open_env(&e, 0);
    pthread_attr_t a;
    void *addr;
    size_t size;
    ck_assert_int_eq(pthread_getattr_np(pthread_self(), &a), 0);
    ck_assert_int_eq(pthread_attr_getstack(&a, &addr, &size), 0);
    pthread_attr_destroy(&a);
    atomic_store(&e.slot->stack_hi, (uintptr_t)addr + size);
    atomic_store(&e.slot->stack_lo, (uintptr_t)addr);
    /* fill the ring (4096 words) up to 100 free words */
    uintptr_t ip = 0x30000, fn = 0;
    uint64_t gen = 0;
    while (mdp_ring_space(&e.slot->ring) >= 100 + 4)
        inject(&e, 1, &ip, &fn, &gen);
    while (mdp_ring_space(&e.slot->ring) > 100) {
        mdp_ring_put(&e.slot->ring, 0, 0);
        mdp_ring_publish(&e.slot->ring, 1);
    }
    uint64_t avail = mdp_ring_avail(&e.slot->ring);
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
    sev.sigev_value.sival_ptr = e.slot;
    sev._sigev_un._tid = (int)syscall(SYS_gettid);
    timer_t timer;
    ck_assert_int_eq(timer_create(CLOCK_THREAD_CPUTIME_ID, &sev, &timer), 0);
    struct itimerspec its = {{0, 0}, {0, 1000000}}; /* once, after 1 ms of CPU */
    ck_assert_int_eq(timer_settime(timer, 0, &its, NULL), 0);
    volatile uint64_t spin = 0;
    for (long i = 0;
         i < 20000000000L && !atomic_load(&e.slot->drops) && !atomic_load(&e.slot->samples); i++)
        spin += (uint64_t)i;
    timer_delete(timer);
    ck_assert_msg(atomic_load(&e.slot->samples) == 0,
                  "a sample of at most 33 frames was taken into a ring "
                  "without room for 255");
    ck_assert_uint_eq(atomic_load(&e.slot->drops), 1);
    ck_assert_uint_eq(mdp_ring_avail(&e.slot->ring), avail);
    mdp_ring_consume(&e.slot->ring, avail);
    close_env(&e);
}
END_TEST

/* The handler called by hand on this thread's slot, as the kernel would
 * (SI_TIMER, the slot in si_value), at a leaf (ip, sp, fp) of a stack
 * inside [lo, hi): the frames' FunctionIDs of the sample it published
 * into fns[], their number returned. */
static unsigned sample_by_hand(struct env *e, uintptr_t ip, uintptr_t sp, uintptr_t fp,
                               uintptr_t *fns, unsigned max)
{
    struct sigaction sa;
    ck_assert_int_eq(sigaction(SIGPROF, NULL, &sa), 0);
    ck_assert(sa.sa_flags & SA_SIGINFO);
    siginfo_t si;
    memset(&si, 0, sizeof si);
    si.si_signo = SIGPROF;
    si.si_code = SI_TIMER;
    si.si_value.sival_ptr = e->slot;
    ucontext_t uc;
    memset(&uc, 0, sizeof uc);
    uc.uc_mcontext.gregs[REG_RIP] = (greg_t)ip;
    uc.uc_mcontext.gregs[REG_RSP] = (greg_t)sp;
    uc.uc_mcontext.gregs[REG_RBP] = (greg_t)fp;
    mdp_ring *r = &e->slot->ring;
    ck_assert_uint_eq(mdp_ring_avail(r), 0);
    sa.sa_sigaction(SIGPROF, &si, &uc);
    uint64_t avail = mdp_ring_avail(r), hdr = mdp_ring_peek(r, 0);
    ck_assert_uint_gt(avail, 0);
    unsigned n = (unsigned)(hdr & 0xff), flags = (unsigned)(hdr >> 8) & 0xff;
    uint64_t at = 1 + !!(flags & MDP_SAMPLE_HAVE_TIME) + !!(flags & MDP_SAMPLE_HAVE_SP);
    ck_assert_uint_eq(avail, at + 3 * (uint64_t)n);
    for (unsigned i = 0; i < n && i < max; i++)
        fns[i] = (uintptr_t)mdp_ring_peek(r, at + 1 + 3 * i);
    mdp_ring_consume(r, avail);
    return n;
}

/* The handler's walk cache (sampler.c) keeps, per thread, the map's answer
 * for a caller's return address and its method's prolog step; it must
 * never answer for code that is gone: a cached FunctionID after the code
 * at that address was replaced by another method's, or removed with its
 * function, would misname the frame. The stack: a leaf the map does not
 * know, whose frame record returns into method code at +0x45 (after a
 * call), whose own frame record (an RBP frame) ends the stack. */
START_TEST(test_walk_cache_never_outlives_the_code)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    mdp_slot_wcache_reset(e.slot);
    ck_assert_ptr_nonnull(e.slot->wcache);
    load_everything(&e, core);
    /* code that is never run: push rbp; mov rbp, rsp; nops, a call at 0x40 */
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(code, MAP_FAILED);
    memset(code, 0x90, 4096);
    static const uint8_t prolog[] = {0x55, 0x48, 0x89, 0xe5};
    memcpy(code, prolog, sizeof prolog);
    code[0x40] = 0xe8;
    uintptr_t ret = (uintptr_t)code + 0x45;
    memset(stack_words, 0, sizeof stack_words);
    atomic_store(&e.slot->stack_lo, LO);
    atomic_store(&e.slot->stack_hi, HI);
    stack_words[20] = SW(30); /* the leaf's frame record: caller's RBP, return address */
    stack_words[21] = ret;
    stack_words[30] = 0; /* the method's: the root */
    stack_words[31] = 0;
    uintptr_t leaf = 0x10; /* no code there: a frame-pointer walk */
    uintptr_t fns[4];

    /* nothing at the address yet: the caller is unknown, and cached so */
    ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 2);
    ck_assert_uint_eq(fns[1], 0);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_SPARE, &make), 0);
    mdp_code_region reg = {(uintptr_t)code, 256};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &reg, 1), 0);
    /* the code added since: the cached "unknown" is not used */
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 2);
        ck_assert_uint_eq(fns[1], F_MAKE);
    }
    /* the answer is cached now (else this test proves nothing) */
    int cached = 0;
    for (unsigned i = 0; i < MDP_WCACHE_ENTRIES; i++)
        cached += e.slot->wcache->e[i].ip == ret - 1 && e.slot->wcache->e[i].fn == F_MAKE &&
                  e.slot->wcache->e[i].step.kind == MDP_STEP_RBP;
    ck_assert_int_eq(cached, 1);
    /* other code at the same address (the memory reused): the new method */
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_SPARE, &reg, 1), 0);
    /* (twice: the walk right after a removal does not use the cache at
     * all; the next one does, and must find the entry stale) */
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 2);
        ck_assert_uint_eq(fns[1], F_SPARE);
    }
    /* its function unloaded, its code with it: unknown again */
    ck_assert_int_ge(mdp_ev_function_unload(core, mdp_seq(core), F_SPARE), 0);
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 2);
        ck_assert_uint_eq(fns[1], 0);
    }
    /* and an RSP frame's method replaced by an RBP frame's at the same
     * address: the step is the new code's (decoded again), not the cached one */
    static const uint8_t rsp_prolog[] = {0x53, 0x48, 0x83, 0xec,
                                         0x18}; /* push rbx; sub rsp, 0x18 */
    memcpy(code + 512, rsp_prolog, sizeof rsp_prolog);
    code[512 + 0x40] = 0xe8;
    uintptr_t ret2 = (uintptr_t)code + 512 + 0x45;
    mdt_idmap_function_info ctor = {.module = MOD, .token = 0x06000031};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_CTOR, &ctor), 0);
    mdp_code_region reg2 = {(uintptr_t)code + 512, 256};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_CTOR, &reg2, 1), 0);
    /* leaf -> F_CTOR (RSP frame of 0x20 bytes at SW(22)..: return address at
     * SW(26)) -> F_MAKE at ret, whose frame record is at SW(30) */
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &reg, 1), 0);
    stack_words[21] = ret2;
    stack_words[26] = ret;
    for (int i = 0; i < 3; i++) {
        ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 3);
        ck_assert_uint_eq(fns[1], F_CTOR);
        ck_assert_uint_eq(fns[2], F_MAKE);
    }
    /* the RBP frame's code now where the RSP frame's was: its frame record
     * at SW(30) is the chain's, SW(26) is not read */
    static const uint8_t rbp_prolog[] = {0x55, 0x48, 0x89, 0xe5};
    memcpy(code + 512, rbp_prolog, sizeof rbp_prolog);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_SPARE, &make), 0);
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_SPARE, &reg2, 1), 0);
    stack_words[20] = SW(24); /* leaf record -> {SW(24): SW(30)-record... } */
    stack_words[24] = SW(30);
    stack_words[25] = ret;
    stack_words[26] = 0x99; /* what the old RSP step would take for a return address */
    for (int i = 0; i < 2; i++) {
        ck_assert_uint_eq(sample_by_hand(&e, leaf, SW(16), SW(20), fns, 4), 3);
        ck_assert_uint_eq(fns[1], F_SPARE);
        ck_assert_uint_eq(fns[2], F_MAKE);
    }
    munmap(code, 4096);
    close_env(&e);
}
END_TEST

/* The handler reads words of frames that are not its own: under ASan the
 * redzones of an instrumented frame (the profiler's own callbacks, down a
 * runtime thread's stack) are poisoned, and a checked load there would
 * abort the host (a compiler profiled under CI's ASan build, once). Here
 * the frame records the walk reads lie in poisoned words, as they would in
 * such a frame: the walk must read them (no report) and name both frames,
 * the leaf's caller by its frame record and the method's own by its
 * prolog's. Without ASan the poisoning is nothing and the walk the same. */
START_TEST(test_walk_reads_stack_words_asan_poisoned)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    /* push rbp; mov rbp, rsp; nops, a call at 0x40 */
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(code, MAP_FAILED);
    memset(code, 0x90, 4096);
    static const uint8_t prolog[] = {0x55, 0x48, 0x89, 0xe5};
    memcpy(code, prolog, sizeof prolog);
    code[0x40] = 0xe8;
    uintptr_t ret = (uintptr_t)code + 0x45;
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region reg = {(uintptr_t)code, 256};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &reg, 1), 0);
    memset(stack_words, 0, sizeof stack_words);
    atomic_store(&e.slot->stack_lo, LO);
    atomic_store(&e.slot->stack_hi, HI);
    stack_words[20] = SW(30); /* the leaf's frame record */
    stack_words[21] = ret;
    stack_words[30] = 0; /* the method's: the root */
    stack_words[31] = 0;
#ifdef MDP_ASAN
    ASAN_POISON_MEMORY_REGION(&stack_words[18], 16 * sizeof stack_words[0]);
#endif
    uintptr_t fns[4];
    unsigned n = sample_by_hand(&e, 0x10, SW(16), SW(20), fns, 4);
#ifdef MDP_ASAN
    ASAN_UNPOISON_MEMORY_REGION(&stack_words[18], 16 * sizeof stack_words[0]);
#endif
    ck_assert_uint_eq(n, 2);
    ck_assert_uint_eq(fns[1], F_MAKE);
    munmap(code, 4096);
    close_env(&e);
}
END_TEST

/* mdp_unwind_caller (a cached step) gives what mdp_unwind_managed gives a
 * frame that is not the leaf, for every prolog shape, return site and
 * stack the test makes. */
START_TEST(test_unwind_step_agrees_with_the_decoder)
{
    static const uint8_t t0[] = {0x55, 0x48, 0x83, 0xec, 0x10, 0x48, 0x8d, 0x6c, 0x24, 0x10, 0x90};
    static const uint8_t rs[] = {0x53, 0x50, 0xe8, 0, 0, 0, 0, 0x90};
    static const uint8_t rb[] = {0x41, 0x57, 0x55, 0x48, 0x83, 0xec, 0x28, 0xcc};
    static const uint8_t osr[] = {0x50, 0x48, 0x89, 0xe5, 0x90};
    static const uint8_t other[] = {0x8b, 0x47, 0x08, 0xc3};
    static const uint8_t mov[] = {0x55, 0x48, 0x89, 0xe5, 0x90, 0x5d, 0xc3};
    const uint8_t *codes[] = {t0, rs, rb, osr, other, mov};
    size_t sizes[] = {sizeof t0, sizeof rs, sizeof rb, sizeof osr, sizeof other, sizeof mov};
    for (unsigned k = 0; k < 6; k++) {
        mdp_unwind_step st;
        mdp_unwind_step_of(&st, codes[k], sizes[k]);
        ck_assert_uint_ne(st.kind, 0);
        for (unsigned w = 0; w < 64; w++)
            stack_words[w] = w % 3 ? SW((w * 7) % 64) : 0x4000 + w;
        for (size_t off = 0; off <= sizes[k]; off++)
            for (unsigned sp = 0; sp < 64; sp += 5)
                for (unsigned fp = 0; fp < 66; fp += 3) {
                    uintptr_t base = (uintptr_t)codes[k];
                    mdp_uw a = {0}, b = {0}, f = {base + off, SW(sp), fp < 64 ? SW(fp) : 0x10};
                    int ra = mdp_unwind_managed(&a, &f, codes[k], sizes[k], 0, LO, HI);
                    int rb2 = mdp_unwind_caller(&b, &f, &st, base, sizes[k], LO, HI);
                    ck_assert_int_eq(ra, rb2);
                    ck_assert_uint_eq(a.ip, b.ip);
                    ck_assert_uint_eq(a.sp, b.sp);
                    ck_assert_uint_eq(a.fp, b.fp);
                }
    }
}
END_TEST

/* Threads of this process (the core's drain thread is one). */
static int threads_now(void)
{
    DIR *d = opendir("/proc/self/task");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += de->d_name[0] != '.';
    closedir(d);
    return n;
}

/* An attached session with --samples ends once the drain thread has counted
 * that many samples (weights included), not before, whatever the wall
 * time: the log appears after the fifth sample of weight 1. */
START_TEST(test_session_ends_after_its_samples)
{
    struct env e;
    int before = threads_now();
    open_env_cfg(&e, 0, 20, 5);
    mdp_core *core = e.core;
    ck_assert_int_eq(threads_now(), before + 1);
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uintptr_t ip = 0x20004, fn = F_MAKE;
    uint64_t gen = gen_of(core, F_MAKE);
    for (int i = 0; i < 4; i++)
        inject(&e, 1, &ip, &fn, &gen);
    /* four samples drained, several periods: no log yet */
    for (int i = 0; i < 50 && mdp_ring_avail(&e.slot->ring); i++)
        usleep(20000);
    ck_assert_uint_eq(mdp_ring_avail(&e.slot->ring), 0);
    usleep(100000);
    int finished = atomic_load(&core->finished);
    ck_assert_msg(!finished, "the session ended after 4 of its 5 samples");
    /* the log is open from the start, and not complete */
    char *early = slurp(e.log);
    ck_assert_msg(!strstr(early, "#stats"), "a #stats line after 4 of 5 samples:\n%s", early);
    inject(&e, 1, &ip, &fn, &gen);
    /* the fifth ends the session: the drain thread writes the log and
     * leaves (the waits bound a hang, they are no window) */
    for (int i = 0; i < 1500 && threads_now() > before; i++)
        usleep(20000);
    ck_assert_msg(threads_now() == before, "the session did not end after its 5 samples");
    char *log = slurp(e.log);
    char want[256];
    snprintf(want, sizeof want, "\nstack 5 %s:0x06000037\n#stats samples=5 ", e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    close_env(&e);
}
END_TEST

/* The drain thread's period (drain.c): with nothing to drain it backs
 * off from 20 ms to MDP_DRAIN_MAX_MS, so a process that waits is woken a
 * few times a second, not 50; a poke (a ring half full, work for the next
 * tick) brings it at once, not at the end of its long period. */
static unsigned drains_now(mdp_core *core)
{
    pthread_mutex_lock(&core->drain_lock);
    unsigned n = core->stats.drain_cycles;
    pthread_mutex_unlock(&core->drain_lock);
    return n;
}

static double mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

START_TEST(test_idle_drain_backs_off_and_a_poke_wakes_it)
{
    struct env e;
    open_env_cfg(&e, 0, 20, 0);
    mdp_core *core = e.core;
    /* 20, 40, 80, 160, 320, 320...: about 8 passes in 1.6 s, not 80 */
    unsigned d0 = drains_now(core);
    usleep(1600000);
    unsigned idle = drains_now(core) - d0;
    ck_assert_msg(idle >= 3 && idle <= 20, "%u drain passes in 1.6 s with nothing to drain", idle);
    /* now at its longest period: each poke gets a pass within 100 ms,
     * where the period alone would give one within 100 ms about one time
     * in three (five in a row: 1 in 400) */
    for (int round = 0; round < 5; round++) {
        usleep(700000); /* back off again to the longest period */
        unsigned before = drains_now(core);
        double t0 = mono_ms();
        mdp_drain_poke(core);
        while (drains_now(core) == before && mono_ms() - t0 < 1000)
            usleep(1000);
        double took = mono_ms() - t0;
        ck_assert_msg(took < 100, "round %d: a poke got its drain pass after %.0f ms", round, took);
    }
    close_env(&e);
}
END_TEST

/* calls mode: the fast hooks' words, the slow hooks' per-thread counts on
 * two threads and the exception events add up per function, and the log
 * is format 2 with each call record's leaves, tail calls and unwinds (the
 * unwind pass reaching a frame that catches is not an unwind). */
struct slow_args {
    mdp_core *core;
    uint64_t *counter;
    int enters, leaves;
};

static void *count_slow(void *arg)
{
    struct slow_args *a = arg;
    for (int i = 0; i < a->enters; i++)
        mdp_calls_count(a->core, a->counter, MDP_CALL_ENTER);
    for (int i = 0; i < a->leaves; i++)
        mdp_calls_count(a->core, a->counter, MDP_CALL_LEAVE);
    return NULL;
}

START_TEST(test_calls_count_every_way_out)
{
    char path[1024], err[256] = "", logpath[256];
    size_t len;
    void *file = map_file(src_path(path, sizeof path, "data/Everything.dll"), &len);
    mdt_image *img;
    ck_assert_int_eq(mdt_image_open_buffer(NULL, &img, "Everything.dll", file, len, 0), 0);
    uint8_t mv[16];
    char mvid[33];
    ck_assert_int_eq(mdt_image_mvid(mv, img), 0);
    mdp_mvid_hex(mvid, mv);
    mdt_image_close(img);
    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.modes = MDP_MODE_CALLS;
    cfg.drain_ms = 600000;
    snprintf(logpath, sizeof logpath, "/tmp/mdp-test-calls-%d.log", (int)getpid());
    snprintf(cfg.output, sizeof cfg.output, "%s", logpath);
    mdp_runtime_ops ops = {.miss = fake_miss, .il_map = fake_il_map};
    mdp_core *core;
    ck_assert_msg(mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err) == 0, "%s", err);
    mdp_module_desc d = {.base = file, .path = "Everything.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD, &d), 0);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    mdt_idmap_function_info other = {.module = MOD, .token = 0x06000031};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_CTOR, &other), 0);
    uint64_t *a = mdp_calls_counter(core, F_MAKE), *b = mdp_calls_counter(core, F_CTOR);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    ck_assert_ptr_eq(mdp_calls_counter(core, F_MAKE), a); /* one counter per function */
    /* F_MAKE: fast hooks (the words the assembly increments): 10 enters,
     * 6 returns, 4 tail calls; slow hooks on two threads: 7 + 5 enters,
     * 7 + 5 leaves */
    a[MDP_CALL_ENTER] += 10;
    a[MDP_CALL_LEAVE] += 6;
    a[MDP_CALL_TAILCALL] += 4;
    struct slow_args s1 = {core, a, 7, 7}, s2 = {core, a, 5, 5};
    pthread_t t1, t2;
    ck_assert_int_eq(pthread_create(&t1, NULL, count_slow, &s1), 0);
    ck_assert_int_eq(pthread_create(&t2, NULL, count_slow, &s2), 0);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    /* F_CTOR: 3 enters; an exception passes through twice; the third time
     * the unwind pass reaches it and it catches, then it returns */
    for (int i = 0; i < 3; i++)
        mdp_calls_count(core, b, MDP_CALL_ENTER);
    for (int i = 0; i < 3; i++)
        mdp_calls_exception(core, F_CTOR, MDP_CALL_UNWIND);
    mdp_calls_exception(core, F_CTOR, MDP_CALL_CATCH);
    mdp_calls_count(core, b, MDP_CALL_LEAVE);
    /* a function that has no counter: ignored */
    mdp_calls_exception(core, F_SPARE, MDP_CALL_UNWIND);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(logpath);
    char want[512];
    ck_assert_msg(strncmp(log, "#mdprofile 2 runtime=test pid=", 30) == 0, "%s", log);
    snprintf(want, sizeof want,
             "\ncall 22 18 4 0 %s:0x06000037\ncall 3 1 0 2 %s:0x06000031\n#stats ", mvid, mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    mdp_core_free(core);
    unlink(logpath);
    /* A second core in the same process: this thread's counts of the first
     * (index 1 was F_CTOR's there) are not this one's (index 1 is F_MAKE's). */
    ck_assert_msg(mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err) == 0, "%s", err);
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD, &d), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_CTOR, &other), 0);
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    ck_assert_ptr_nonnull(mdp_calls_counter(core, F_CTOR));
    a = mdp_calls_counter(core, F_MAKE);
    mdp_calls_count(core, a, MDP_CALL_ENTER);
    mdp_calls_count(core, a, MDP_CALL_LEAVE);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    log = slurp(logpath);
    snprintf(want, sizeof want, "\ncall 1 1 0 0 %s:0x06000037\n#stats ", mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    mdp_core_free(core);
    unlink(logpath);
    munmap(file, len);
}
END_TEST

/* Native frames name their ELF object (file name, build-id, offset from
 * the load bias), with the `#elf` line of the object before the records;
 * the thread's activity marks the native frames on the leaf side, up to
 * the first frame that is not native; an address in no object is a stub.
 * (Only the runtime's own code called from a stub is marked `stub`.) */
START_TEST(test_native_frames_name_their_elf_object)
{
    struct env e;
    open_env(&e, 0);
    Dl_info di;
    void *libc_fn = dlsym(RTLD_DEFAULT, "qsort"), *own = (void *)inject_act;
    ck_assert_ptr_nonnull(libc_fn);
    ck_assert(dladdr(libc_fn, &di) && di.dli_fname);
    uintptr_t libc_off = (uintptr_t)libc_fn + 1 - (uintptr_t)di.dli_fbase;
    /* libc's, or under ASan the sanitizer runtime's interceptor */
    const char *slash = strrchr(di.dli_fname, '/');
    char lib[128], prefix[160];
    snprintf(lib, sizeof lib, "%s", slash ? slash + 1 : di.dli_fname);
    snprintf(prefix, sizeof prefix, "stack 1 native:%s:", lib);
    size_t plen = strlen(prefix);
    ck_assert(dladdr(own, &di));
    void *anon = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(anon, MAP_FAILED);
    uintptr_t s1[3] = {(uintptr_t)libc_fn + 1, (uintptr_t)own + 2, (uintptr_t)anon + 16};
    inject_act(&e, 3, s1, MDP_ACT_GC);
    uintptr_t s2[3] = {(uintptr_t)libc_fn + 1, (uintptr_t)anon + 16, (uintptr_t)own + 2};
    inject_act(&e, 3, s2, MDP_ACT_NONE);
    ck_assert_int_eq(mdp_core_finish(e.core, "exit"), 0);
    char *log = slurp(e.log);
    /* the libc frame: native:libc.so.6:<build-id>+0x<off> */
    const char *at = strstr(log, prefix);
    ck_assert_msg(at, "%s", log);
    size_t idlen = strspn(at + plen, "0123456789abcdef");
    ck_assert_msg(idlen >= 16 && idlen % 2 == 0 && at[plen + idlen] == '+', "%s", log);
    char want[512];
    /* marked up to the stub, the program's own frame too */
    snprintf(want, sizeof want, "\n%s%.*s+0x%lx!gc native:", prefix, (int)idlen, at + plen,
             (unsigned long)libc_off);
    const char *rec = strstr(log, want);
    ck_assert_msg(rec && strstr(rec, "!gc stub\n") == strchr(rec + 1, '\n') - 8, "%s", log);
    /* libc called from a stub is a P/Invoke's target, not the runtime's
     * work: unmarked (only libcoreclr's code called from a stub is) */
    snprintf(want, sizeof want, "\n%s%.*s+0x%lx stub native:", prefix, (int)idlen, at + plen,
             (unsigned long)libc_off);
    ck_assert_msg(strstr(log, want), "%s", log);
    /* the #elf line of each, with the same key and the file's path, first */
    snprintf(want, sizeof want, "\n#elf %s:%.*s /", lib, (int)idlen, at + plen);
    const char *elf = strstr(log, want);
    ck_assert_msg(elf && elf < at && strstr(elf, lib), "%s", log);
    ck_assert_msg(strstr(log, "\n#elf test_core:") || strstr(log, "\n#elf lt-test_core:"), "%s",
                  log);
    ck_assert_msg(strstr(log, " act.gc=1 ") && strstr(log, " act.stub=0") &&
                      strstr(log, " native.module=4 "),
                  "%s", log);
    munmap(anon, 4096);
    close_env(&e);
}
END_TEST

/* The activity word of the thread's slot: JIT inside a type load inside a
 * JIT, an exception, a GC begun on this thread and ended from another,
 * more levels than the word holds; nothing when activities are off. */
static void *end_gc(void *arg)
{
    mdp_ev_activity(arg, MDP_ACT_GC, 0);
    return NULL;
}

START_TEST(test_activities_nest_per_thread)
{
    struct env e;
    open_env(&e, 0);
    struct mdp_slot *t = e.slot;
    ck_assert_ptr_eq(mdp_self_slot(e.core), t);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 1);
    mdp_ev_activity(e.core, MDP_ACT_TYPELOAD, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_TYPELOAD);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_JIT);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 0);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_TYPELOAD);
    mdp_ev_activity(e.core, MDP_ACT_TYPELOAD, 0);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 0);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 0); /* an end without its begin */
    ck_assert_uint_eq(t->act_depth, 0);
    /* deeper than the word: the levels past it are counted */
    for (int i = 0; i < 12; i++)
        mdp_ev_activity(e.core, i % 2 ? MDP_ACT_JIT : MDP_ACT_TYPELOAD, 1);
    for (int i = 12; i-- > 0;) {
        ck_assert_uint_eq(mdp_slot_activity(t), i >= 8  ? MDP_ACT_JIT
                                                : i % 2 ? MDP_ACT_JIT
                                                        : MDP_ACT_TYPELOAD);
        mdp_ev_activity(e.core, i % 2 ? MDP_ACT_JIT : MDP_ACT_TYPELOAD, 0);
    }
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    /* an exception until a catch takes it; a JIT inside it shows */
    mdp_ev_activity(e.core, MDP_ACT_EXCEPTION, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_EXCEPTION);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_JIT);
    mdp_ev_activity(e.core, MDP_ACT_JIT, 0);
    mdp_ev_activity(e.core, MDP_ACT_EXCEPTION, 0);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    /* a GC begun here, finished on another thread */
    mdp_ev_activity(e.core, MDP_ACT_GC, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_GC);
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, end_gc, e.core), 0);
    pthread_join(th, NULL);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    /* the role of a runtime GC thread, by its name */
    ck_assert_uint_eq(mdp_thread_role(".NET Server GC"), MDP_ACT_GC);
    ck_assert_uint_eq(mdp_thread_role(".NET BGC"), MDP_ACT_GC);
    ck_assert_uint_eq(mdp_thread_role(".NET TP Worker"), MDP_ACT_NONE);
    /* off: nothing changes */
    e.core->cfg.activities = 0;
    mdp_ev_activity(e.core, MDP_ACT_JIT, 1);
    ck_assert_uint_eq(mdp_slot_activity(t), MDP_ACT_NONE);
    close_env(&e);
}
END_TEST

START_TEST(test_records_sorted_without_names)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uintptr_t ip = 0x20004, fn = F_MAKE, stray = 0x30000, none = 0;
    uint64_t gen = gen_of(core, F_MAKE), nogen = 0;
    inject(&e, 1, &stray, &none, &nogen);
    for (int i = 0; i < 5; i++)
        inject(&e, 1, &ip, &fn, &gen);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0); /* a second finish writes nothing */
    char *log = slurp(e.log);
    char want[256];
    snprintf(want, sizeof want, "\nstack 5 %s:0x06000037\nstack 1 stub\n#stats samples=6 ", e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    ck_assert_ptr_null(strchr(log, '\t'));
    /* no core library loaded: the header names no framework folder */
    ck_assert_msg(!strstr(log, "framework="), "%s", log);
    close_env(&e);
}
END_TEST

/* ---- the log written in pieces ------------------------------------------------ */

START_TEST(test_log_names)
{
    char out[256];
    ck_assert_int_eq(mdp_log_expand(out, sizeof out, "/l/app.%p.log", 42), 0);
    ck_assert_str_eq(out, "/l/app.42.log");
    ck_assert_int_eq(mdp_log_expand(out, sizeof out, "%p%p", 7), 0);
    ck_assert_str_eq(out, "77");
    ck_assert_int_eq(mdp_log_expand(out, sizeof out, "/l/app.log", 7), 0);
    ck_assert_str_eq(out, "/l/app.log");
    ck_assert_int_eq(mdp_log_expand(out, 8, "/l/app.%p.log", 42), -1);
    ck_assert_int_eq(mdp_log_sibling_name(out, sizeof out, "/l/app.log", 123, 0), 0);
    ck_assert_str_eq(out, "/l/app.123.log");
    ck_assert_int_eq(mdp_log_sibling_name(out, sizeof out, "/l/app.log", 123, 2), 0);
    ck_assert_str_eq(out, "/l/app.123.2.log");
    ck_assert_int_eq(mdp_log_sibling_name(out, sizeof out, "/x.y/trace", 5, 0), 0);
    ck_assert_str_eq(out, "/x.y/trace.5");
    ck_assert_int_eq(mdp_log_sibling_name(out, sizeof out, "/l/.hidden", 5, 0), 0);
    ck_assert_str_eq(out, "/l/.hidden.5");
    ck_assert_int_eq(mdp_log_sibling_name(out, sizeof out, "/l/app.9.log", -1, 1), 0);
    ck_assert_str_eq(out, "/l/app.9.1.log");
    ck_assert_int_eq(mdp_log_sibling_name(out, 10, "/l/app.log", 123, 0), -1);
}
END_TEST

START_TEST(test_channel_encoding)
{
    char out[64], back[64];
    size_t n = mdp_pct_escape(out, sizeof out,
                              "a b%\n\x7f"
                              "é",
                              8);
    ck_assert_str_eq(out, "a%20b%25%0A%7F\xc3\xa9");
    ck_assert_uint_eq(n, strlen(out));
    mdp_pct_unescape(back, sizeof back, out, strlen(out));
    ck_assert_str_eq(back, "a b%\n\x7f"
                           "é");
    /* cut at an escape boundary, never inside one */
    n = mdp_pct_escape(out, 6, "a b c", 5);
    ck_assert_str_eq(out, "a%20b");
    n = mdp_pct_escape(out, 5, "a b c", 5);
    ck_assert_str_eq(out, "a%20");
    /* a '%' not followed by two hex digits stays */
    mdp_pct_unescape(back, sizeof back, "50%-%4", 6);
    ck_assert_str_eq(back, "50%-%4");
}
END_TEST

START_TEST(test_framework_folders)
{
    static const struct {
        const char *dir;
        int yes;
    } cases[] = {
        {"/usr/share/dotnet/shared/Microsoft.NETCore.App/10.0.12", 1},
        {"/usr/share/dotnet/shared/Microsoft.AspNetCore.App/10.0.12", 1},
        {"/usr/share/dotnet/sdk/10.0.401", 1},
        {"/usr/share/dotnet/sdk/10.0.401/Roslyn/bincore", 1},
        {"/usr/share/dotnet/sdk/10.0.401/Sdks/Microsoft.NET.Sdk/tools/net10.0", 1},
        {"/home/me/app/bin/Release/net10.0", 0},
        {"/x/shared/Name", 0},
        {"/x/shared/Name/v1", 0},
        {"/x/sdk/tools", 0},
        {"/usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/10.0.12/analyzers/dotnet/cs", 1},
        {"/usr/share/dotnet/packs/Microsoft.NETCore.App.Ref/10.0.12", 1},
        {"/x/packs/Name", 0},
        {"/x/packs/Name/tools", 0},
        {"/", 0},
        {"", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        ck_assert_msg(mdp_framework_folder(cases[i].dir, strlen(cases[i].dir)) == cases[i].yes,
                      "%s", cases[i].dir);
}
END_TEST

static int count_of(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; (p = strstr(p, needle)); p++)
        n++;
    return n;
}

/* Records go out as they are aggregated: a write after the first stack,
 * then the same stack again and the end. The header and the module's
 * #module line come once, before the first record; readers sum the two
 * records of the stack; #stats closes the log. */
START_TEST(test_log_written_in_pieces)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uintptr_t ip = 0x20004, fn = F_MAKE;
    uint64_t gen = gen_of(core, F_MAKE);
    for (int i = 0; i < 3; i++)
        inject(&e, 1, &ip, &fn, &gen);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    pthread_mutex_unlock(&core->drain_lock);
    char first[16384];
    snprintf(first, sizeof first, "%s", slurp(e.log));
    char want[256];
    snprintf(want, sizeof want, "\n#module %s Everything 1.2.3.4\nstack 3 %s:0x06000037\n", e.mvid,
             e.mvid);
    ck_assert_msg(strncmp(first, "#mdprofile 4 ", 13) == 0 && strstr(first, want) &&
                      !strstr(first, "#stats"),
                  "after the first write:\n%s", first);
    for (int i = 0; i < 2; i++)
        inject(&e, 1, &ip, &fn, &gen);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    ck_assert_msg(strncmp(log, first, strlen(first)) == 0, "the first write was changed:\n%s", log);
    snprintf(want, sizeof want, "%sstack 2 %s:0x06000037\n#stats samples=5 records=2 ", first,
             e.mvid);
    ck_assert_msg(strncmp(log, want, strlen(want)) == 0, "missing %s in\n%s", want, log);
    ck_assert_int_eq(count_of(log, "#mdprofile"), 1);
    ck_assert_int_eq(count_of(log, "#module"), 1);
    ck_assert_msg(strstr(log, " end=exit\n") && log[strlen(log) - 1] == '\n', "%s", log);
    close_env(&e);
}
END_TEST

/* After a termination signal each write ends with a tentative #stats line
 * saying end=signal:NAME, and the next write replaces it: the log is whole
 * whenever the process dies, and has one #stats line at the end. */
START_TEST(test_signal_stats_are_replaced)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uintptr_t ip = 0x20004, fn = F_MAKE;
    uint64_t gen = gen_of(core, F_MAKE);
    atomic_store(&core->writer->term_signal, SIGTERM);
    for (int round = 1; round <= 3; round++) {
        inject(&e, 1, &ip, &fn, &gen);
        pthread_mutex_lock(&core->drain_lock);
        mdp_drain_all(core);
        mdp_log_tick(core); /* a signal came: a write now, ending in #stats */
        pthread_mutex_unlock(&core->drain_lock);
        char *log = slurp(e.log);
        char want[128];
        snprintf(want, sizeof want, "\n#stats samples=%d records=%d ", round, round);
        /* one #stats line, the last one */
        const char *st = strstr(log, "\n#stats ");
        ck_assert_msg(count_of(log, "#stats") == 1 && strstr(log, want) && st &&
                          strstr(st, " end=signal:SIGTERM\n") ==
                              st + strlen(st) - strlen(" end=signal:SIGTERM\n"),
                      "round %d:\n%s", round, log);
        ck_assert_int_eq(count_of(log, "\nstack 1 "), round);
    }
    /* the clean end after the signal says the signal */
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    ck_assert_msg(count_of(log, "#stats") == 1 && strstr(log, " end=signal:SIGTERM\n"), "%s", log);
    close_env(&e);
}
END_TEST

/* The timer's signals counted at the end: a note (a # line before
 * #stats) when the CPU time a stack stood for was over 6 ms on average,
 * as on a busy machine (perfclock.c); none at the tick's 4 ms, none under
 * a CPU second, none with the perf clock. */
static char *sparse_log(uint64_t samples, uint64_t signals, int clock)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    core->clock = clock;
    core->cfg.rate = 1000;
    core->stats.samples = samples;
    core->stats.signals = signals;
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    close_env(&e);
    return log;
}

START_TEST(test_sparse_timer_is_said)
{
    const char *want = "\n# 300 stacks for 3.0 s of CPU time: one per 10.0 ms on average, "
                       "where 1000 Hz was asked (the timer clock";
    char *log = sparse_log(3000, 300, MDP_CLOCK_TIMER);
    const char *note = strstr(log, want), *st = strstr(log, "\n#stats ");
    ck_assert_msg(note && st && note < st && count_of(log, "stacks for") == 1, "%s", log);
    log = sparse_log(3000, 750, MDP_CLOCK_TIMER); /* 4 ms: the tick at rest */
    ck_assert_msg(!strstr(log, "stacks for"), "%s", log);
    log = sparse_log(900, 9, MDP_CLOCK_TIMER); /* under a CPU second */
    ck_assert_msg(!strstr(log, "stacks for"), "%s", log);
    log = sparse_log(3000, 300, MDP_CLOCK_PERF);
    ck_assert_msg(!strstr(log, "stacks for"), "%s", log);
    /* perf refused: no advice to ask for it; --clock timer: the advice */
    setenv("MDPROFILE_TEST_PERF", "refuse", 1);
    log = sparse_log(3000, 300, MDP_CLOCK_TIMER);
    unsetenv("MDPROFILE_TEST_PERF");
    ck_assert_msg(strstr(log, "; perf_event_open, which would take one per period, is refused "
                              "here\n"),
                  "%s", log);
    env_clock = MDP_CLOCK_TIMER;
    log = sparse_log(3000, 300, MDP_CLOCK_TIMER);
    env_clock = MDP_CLOCK_ADAPTIVE;
    ck_assert_msg(strstr(log, "; --clock perf takes one per period\n"), "%s", log);
}
END_TEST

/* A write that fails (the file size limit here: the profiler checks it, a
 * write past it would raise SIGXFSZ) changes nothing in the log, is said
 * once, and what it held goes out with the next write that can be made. */
START_TEST(test_failed_write_is_undone_and_retried)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uintptr_t ip = 0x20004, fn = F_MAKE;
    uint64_t gen = gen_of(core, F_MAKE);
    inject(&e, 1, &ip, &fn, &gen);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    pthread_mutex_unlock(&core->drain_lock);
    struct stat st;
    ck_assert_int_eq(stat(e.log, &st), 0);
    off_t before = st.st_size;
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)before + 10; /* room for less than a record */
    /* no assertion while the limit holds: Check writes its own files */
    signal(SIGXFSZ, SIG_IGN);
    int set = setrlimit(RLIMIT_FSIZE, &lim), flushed[2];
    off_t sizes[2];
    for (int round = 0; round < 2; round++) {
        inject(&e, 1, &ip, &fn, &gen);
        pthread_mutex_lock(&core->drain_lock);
        mdp_drain_all(core);
        flushed[round] = mdp_log_flush(core, NULL, 0);
        pthread_mutex_unlock(&core->drain_lock);
        sizes[round] = stat(e.log, &st) == 0 ? st.st_size : -1;
    }
    int reset = setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_int_eq(set, 0);
    ck_assert_int_eq(reset, 0);
    for (int round = 0; round < 2; round++) {
        ck_assert_int_eq(flushed[round], -1);
        ck_assert_int_eq(sizes[round], before);
    }
    ck_assert_int_eq(core->log.failed_errno, EFBIG);
    ck_assert_uint_eq(core->log.failures, 2);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    char want[256];
    /* said once in the log, and the two pending samples written after it */
    snprintf(want, sizeof want, "File too large");
    ck_assert_int_eq(count_of(log, want), 1);
    snprintf(want, sizeof want, "\nstack 2 %s:0x06000037\n#stats samples=3 ", e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    close_env(&e);
}
END_TEST

/* The incremental writer names each ELF object in the write that first
 * holds one of its frames, before that frame's record, once per log: an
 * object first used in a write that fails is named by the next write that
 * succeeds (the failed one is undone), never twice. */
START_TEST(test_elf_lines_follow_the_writes)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    void *libc_fn = dlsym(RTLD_DEFAULT, "qsort"), *own = (void *)inject_act;
    Dl_info di;
    ck_assert(libc_fn && dladdr(libc_fn, &di) && di.dli_fname);
    const char *slash = strrchr(di.dli_fname, '/');
    char libc_elf[160], own_elf[160];
    snprintf(libc_elf, sizeof libc_elf, "#elf %s:", slash ? slash + 1 : di.dli_fname);
    ck_assert(dladdr(own, &di) && di.dli_fname);
    slash = strrchr(di.dli_fname, '/');
    snprintf(own_elf, sizeof own_elf, "#elf %s:", slash ? slash + 1 : di.dli_fname);
    /* first write: libc's frame */
    uintptr_t s1[1] = {(uintptr_t)libc_fn + 1};
    inject_act(&e, 1, s1, MDP_ACT_NONE);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    pthread_mutex_unlock(&core->drain_lock);
    char first[16384];
    snprintf(first, sizeof first, "%s", slurp(e.log));
    ck_assert_msg(count_of(first, libc_elf) == 1 && !strstr(first, own_elf), "%s", first);
    /* a write that fails holds the program's own frame */
    struct stat st;
    ck_assert_int_eq(stat(e.log, &st), 0);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)st.st_size + 10;
    uintptr_t s2[2] = {(uintptr_t)own + 2, (uintptr_t)libc_fn + 1};
    inject_act(&e, 2, s2, MDP_ACT_NONE);
    signal(SIGXFSZ, SIG_IGN);
    int set = setrlimit(RLIMIT_FSIZE, &lim);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    int flushed = mdp_log_flush(core, NULL, 0);
    pthread_mutex_unlock(&core->drain_lock);
    int reset = setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    ck_assert_int_eq(set, 0);
    ck_assert_int_eq(reset, 0);
    ck_assert_int_eq(flushed, -1);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    ck_assert_msg(strncmp(log, first, strlen(first)) == 0, "the first write was changed:\n%s", log);
    const char *rest = log + strlen(first);
    /* the next write names the program's object, before the record */
    const char *elf = strstr(rest, own_elf), *rec = strstr(rest, "\nstack 1 native:");
    ck_assert_msg(elf && rec && elf < rec, "%s", log);
    ck_assert_int_eq(count_of(log, own_elf), 1);
    ck_assert_int_eq(count_of(log, libc_elf), 1);
    close_env(&e);
}
END_TEST

/* A sample the handler cut at the depth limit ends with the truncated
 * frame, counted in #stats but not as a frame of code. */
START_TEST(test_cut_stack_ends_truncated)
{
    struct env e;
    open_env(&e, 1);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uint64_t gen = gen_of(core, F_MAKE);
    mdp_ring *r = &e.slot->ring;
    /* two frames of a deeper stack, weight 3 */
    mdp_ring_put(r, 0, MDP_SAMPLE_HDR(2, MDP_SAMPLE_CUT, 3));
    for (int i = 0; i < 2; i++) {
        mdp_ring_put(r, 1 + 3 * i, 0x20004 + (uintptr_t)i);
        mdp_ring_put(r, 2 + 3 * i, F_MAKE);
        mdp_ring_put(r, 3 + 3 * i, gen);
    }
    mdp_ring_publish(r, 7);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    char want[256];
    snprintf(want, sizeof want, "\nstack 3 %s:0x06000037 %s:0x06000037 truncated\t", e.mvid,
             e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    ck_assert_msg(strstr(log, "\ttruncated\n") && strstr(log, " frames=6 ") &&
                      strstr(log, " truncated=3 "),
                  "%s", log);
    close_env(&e);
}
END_TEST

/* The writer's table of record kinds (log.h) and doc/profile-log.md's
 * agree: each kind has its row, with the fields between the count and
 * the frames the table says; and a record is written as the table says
 * (its word, count, then the fields it keeps). */
START_TEST(test_record_kinds_are_documented)
{
    const char *doc = slurp_src("doc/profile-log.md");
    for (unsigned k = 0; k < MDP_REC_NKINDS; k++) {
        const struct mdp_rec_desc *d = &mdp_rec_kinds[k];
        char row[64], extra[128];
        snprintf(row, sizeof row, "\n| `%s` | ", d->word);
        const char *at = strstr(doc, row);
        ck_assert_msg(at != NULL, "doc/profile-log.md has no row for the kind %s", d->word);
        const char *cell_end = strstr(at + strlen(row), " | ");
        ck_assert_ptr_nonnull(cell_end);
        snprintf(extra, sizeof extra, "`%s`", d->extra);
        const char *in = strstr(at + strlen(row), extra);
        ck_assert_msg(in && in < cell_end, "the row of %s does not say %s", d->word, extra);
        /* what the record keeps beside its count is among those fields */
        if (d->fields & MDP_RECF_BYTES)
            ck_assert_msg(!strncmp(d->extra, "bytes", 5) || !strncmp(d->extra, "nanos", 5), "%s",
                          d->word);
        if (d->fields & MDP_RECF_EXITS)
            ck_assert_str_eq(d->extra, "leaves tailcalls unwinds");
        ck_assert_uint_ge(d->format, 1);
        ck_assert_uint_le(d->format, 4);
        ck_assert_uint_ne(d->modes, 0);
    }
}
END_TEST

/* #stats has r2rnames.* only where the image names missed ReadyToRun
 * methods (r2rnames=image, or ilmaps=check, which names them both ways and
 * adds how they compared): by default they would be zeros. */
START_TEST(test_r2rnames_stats_only_where_the_image_names)
{
    static const struct {
        int r2rnames, ilmaps;
        int keys, compared;
    } cases[] = {{MDP_R2RNAMES_RUNTIME, MDP_ILMAPS_IMAGE, 0, 0},
                 {MDP_R2RNAMES_RUNTIME, MDP_ILMAPS_RUNTIME, 0, 0},
                 {MDP_R2RNAMES_IMAGE, MDP_ILMAPS_IMAGE, 1, 0},
                 {MDP_R2RNAMES_RUNTIME, MDP_ILMAPS_CHECK, 1, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct env e;
        open_env(&e, 0);
        e.core->cfg.r2rnames = cases[i].r2rnames;
        e.core->cfg.ilmaps = cases[i].ilmaps;
        ck_assert_int_eq(mdp_core_finish(e.core, "exit"), 0);
        char *log = slurp_raw(e.log);
        const char *st = strstr(log, "#stats ");
        ck_assert_ptr_nonnull(st);
        ck_assert_msg(!strstr(st, " r2rnames.image=") == !cases[i].keys &&
                          !strstr(st, " r2rnames.open_us=") == !cases[i].keys &&
                          !strstr(st, " r2rnames.agree=") == !cases[i].compared,
                      "case %zu: %s", i, st);
        ck_assert_ptr_nonnull(strstr(st, " ilmaps.image=")); /* the group beside it stays */
        close_env(&e);
    }
}
END_TEST

/* A sample record says its thread and time slice (format 4): the slice
 * from the time the handler stamped (a sample without one: the drain's
 * time); #thread lines name the thread, by the runtime's name (given before
 * the thread's slot existed, and renamed) and the kernel's. */
START_TEST(test_thread_and_slice)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core);
    mdt_idmap_function_info make = {.module = MOD, .token = 0x06000037};
    ck_assert_int_ge(mdp_ev_function_load(core, mdp_seq(core), F_MAKE, &make), 0);
    mdp_code_region r2 = {0x20000, 0x80};
    ck_assert_int_eq(mdp_ev_code(core, mdp_seq(core), F_MAKE, &r2, 1), 0);
    uint64_t gen = gen_of(core, F_MAKE);
    /* the runtime names its thread before it has a slot, then it starts */
    mdp_ev_thread_name(core, 0x7777, "Worker A%");
    e.slot->runtime_thread = 0x7777;
    mdp_thread_named_start(core, e.slot); /* the log below has the name */
    uint64_t start =
        (uint64_t)core->start_mono.tv_sec * 1000000000u + (uint64_t)core->start_mono.tv_nsec;
    mdp_ring *r = &e.slot->ring;
    /* samples at 0.2 s (weight 2), 2.5 s (weight 3) and at 2.9 s (1) */
    const uint64_t at[3] = {200, 2500, 2900}, w[3] = {2, 3, 1};
    for (int i = 0; i < 3; i++) {
        mdp_ring_put(r, 0, MDP_SAMPLE_HDR(1, MDP_SAMPLE_HAVE_TIME, w[i]));
        mdp_ring_put(r, 1, start + at[i] * 1000000u);
        mdp_ring_put(r, 2, 0x20004);
        mdp_ring_put(r, 3, F_MAKE);
        mdp_ring_put(r, 4, gen);
        mdp_ring_publish(r, 5);
    }
    /* a time before the start (the coarse clock lags a tick): slice 0 */
    mdp_ring_put(r, 0, MDP_SAMPLE_HDR(1, MDP_SAMPLE_HAVE_TIME, 1));
    mdp_ring_put(r, 1, start - 3000000u);
    mdp_ring_put(r, 2, 0x20004);
    mdp_ring_put(r, 3, F_MAKE);
    mdp_ring_put(r, 4, gen);
    mdp_ring_publish(r, 5);
    pthread_mutex_lock(&core->drain_lock);
    mdp_drain_all(core);
    pthread_mutex_unlock(&core->drain_lock);
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    mdp_ev_thread_name(core, 0x7777, "Renamed");
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp_raw(e.log);
    int tid = (int)syscall(SYS_gettid);
    char want[256], comm[32] = "", path[64];
    snprintf(want, sizeof want, "\nstack 3 %d 0 %s:0x06000037\n", tid, e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    snprintf(want, sizeof want, "\nstack 4 %d 2 %s:0x06000037\n", tid, e.mvid);
    ck_assert_msg(strstr(log, want), "missing %s in\n%s", want, log);
    /* the first write names the thread (its kernel name read then), before
     * its records; the rename comes in the next write */
    snprintf(path, sizeof path, "/proc/self/task/%d/comm", tid);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    ck_assert_ptr_nonnull(fgets(comm, sizeof comm, f));
    fclose(f);
    comm[strcspn(comm, "\n")] = 0;
    char enc[64];
    mdp_pct_escape(enc, sizeof enc, comm, strlen(comm));
    snprintf(want, sizeof want, "\n#thread %d managed=1 name=Worker%%20A%%25 os=%s\n", tid, enc);
    const char *named = strstr(log, want), *rec = strstr(log, "\nstack ");
    ck_assert_msg(named && rec && named < rec, "missing %s before the records in\n%s", want, log);
    snprintf(want, sizeof want, "\n#thread %d managed=1 name=Renamed os=%s\n", tid, enc);
    const char *renamed = strstr(log, want);
    ck_assert_msg(renamed && renamed > rec, "missing %s after the records in\n%s", want, log);
    ck_assert_msg(strstr(log, " slice=1000 "), "%s", log);
    close_env(&e);
}
END_TEST

/* A thread's kernel name, and the role it gives (a GC thread's), are read
 * at its first scans and at each write, not at every scan after that: the
 * scans' /proc reads were most of the drain thread's own time
 * (threadnames.c). */
START_TEST(test_thread_role_read_while_new_and_at_writes)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    char was[16] = "";
    ck_assert_int_eq(pthread_getname_np(pthread_self(), was, sizeof was), 0);
    mdp_thread_named_start(core, e.slot);
    /* new: its scans read the name */
    ck_assert_int_eq(pthread_setname_np(pthread_self(), ".NET BGC"), 0);
    mdp_threads_name_scan(core, 0);
    ck_assert_uint_eq(atomic_load(&e.slot->act_role), MDP_ACT_GC);
    ck_assert_int_eq(pthread_setname_np(pthread_self(), "plain"), 0);
    for (int i = 0; i < 3; i++)
        mdp_threads_name_scan(core, 0);
    ck_assert_uint_eq(atomic_load(&e.slot->act_role), MDP_ACT_NONE);
    /* settled: the scans between writes leave it */
    ck_assert_int_eq(pthread_setname_np(pthread_self(), ".NET BGC"), 0);
    for (int i = 0; i < 8; i++)
        mdp_threads_name_scan(core, 0);
    ck_assert_uint_eq(atomic_load(&e.slot->act_role), MDP_ACT_NONE);
    /* a write's scan reads it */
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    ck_assert_uint_eq(atomic_load(&e.slot->act_role), MDP_ACT_GC);
    pthread_setname_np(pthread_self(), was);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp_raw(e.log), want[96];
    int tid = (int)syscall(SYS_gettid);
    snprintf(want, sizeof want, "\n#thread %d managed=0 os=plain\n", tid);
    const char *plain = strstr(log, want);
    snprintf(want, sizeof want, "\n#thread %d managed=0 os=.NET%%20BGC\n", tid);
    const char *bgc = plain ? strstr(plain, want) : NULL;
    ck_assert_msg(plain && bgc, "missing the renames in\n%s", log);

    close_env(&e);
}
END_TEST

/* A thread the runtime does not report, blocked in a system call, is taken
 * by the thread scan with the mapping that holds its stack (one read of
 * /proc/self/maps for all such threads: threads.c). */
struct blocked_arg {
    int fd, tid;
    uintptr_t sp;
};

static void *block_in_read(void *arg)
{
    struct blocked_arg *a = arg;
    char c, here;
    a->sp = (uintptr_t)&here;
    __atomic_store_n(&a->tid, (int)syscall(SYS_gettid), __ATOMIC_RELEASE);
    ssize_t n = read(a->fd, &c, 1);
    (void)n;
    return NULL;
}

START_TEST(test_scan_takes_a_blocked_thread_with_its_stack)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    struct blocked_arg a = {p[0], 0, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, block_in_read, &a), 0);
    while (!__atomic_load_n(&a.tid, __ATOMIC_ACQUIRE))
        usleep(1000);
    /* blocked in read: its syscall file names its stack pointer */
    char path[64], buf[256];
    snprintf(path, sizeof path, "/proc/self/task/%d/syscall", a.tid);
    for (int i = 0; i < 1000; i++) {
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        if (!strncmp(buf, "0 ", 2)) /* read(2) */
            break;
        usleep(1000);
    }
    /* wall mode: a slot without a timer (no handler in this test) */
    unsigned modes = core->cfg.modes;
    core->cfg.modes = MDP_MODE_WALL;
    core->cfg.all_threads = 1;
    core->sampling = 1;
    mdp_threads_scan(core);
    struct mdp_slot *got = NULL;
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++)
        if (atomic_load(&core->slots[i].state) == SLOT_ACTIVE &&
            atomic_load(&core->slots[i].tid) == a.tid)
            got = &core->slots[i];
    ck_assert_msg(got, "the blocked thread %d has no slot", a.tid);
    uintptr_t lo = atomic_load(&got->stack_lo), hi = atomic_load(&got->stack_hi);
    ck_assert_msg(lo <= a.sp && a.sp < hi, "stack %#lx-%#lx does not hold %#lx", (unsigned long)lo,
                  (unsigned long)hi, (unsigned long)a.sp);
    ck_assert_int_eq(write(p[1], "x", 1), 1);
    pthread_join(th, NULL);
    close(p[0]);
    close(p[1]);
    mdp_sampler_stop(core);
    core->cfg.modes = modes;
    close_env(&e);
}
END_TEST

/* Sample mode's perf_events clock (perfclock.c): a thread that spins is
 * signalled at the rate asked, per CPU second (the CPU-time timer gives
 * ~HZ, 250 here), every signal found its slot through its fd; a SIGPROF
 * from another fd (a pipe's O_ASYNC) is not a sample; a thread beyond
 * the cap on fds gets the timer; retiring closes every fd. Where the
 * kernel refuses perf_event_open, --clock auto falls back to the timer
 * (check_timer_fallback: tested there instead, and everywhere with the
 * refusal forced). */
static int perf_fds_open(void)
{
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *de;
    char path[64], link[64];
    while ((de = readdir(d))) {
        snprintf(path, sizeof path, "/proc/self/fd/%s", de->d_name);
        ssize_t k = readlink(path, link, sizeof link - 1);
        if (k > 0) {
            link[k] = 0;
            n += strstr(link, "perf_event") != NULL;
        }
    }
    closedir(d);
    return n;
}

struct spin_arg {
    mdp_core *core;
    int tid;
    double cpu_s;
    int registered;
    _Atomic int stop; /* spin_until: stop spinning */
};

static double thread_cpu_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *spin_sampled(void *arg)
{
    struct spin_arg *a = arg;
    pthread_attr_t at;
    void *addr;
    size_t size;
    ck_assert_int_eq(pthread_getattr_np(pthread_self(), &at), 0);
    ck_assert_int_eq(pthread_attr_getstack(&at, &addr, &size), 0);
    pthread_attr_destroy(&at);
    a->tid = (int)syscall(SYS_gettid);
    a->registered = mdp_sampler_thread_start(a->core, 0, a->tid, (uintptr_t)addr,
                                             (uintptr_t)addr + size, 0) == 0;
    double t0 = thread_cpu_s();
    volatile uint64_t x = 1;
    while (thread_cpu_s() - t0 < 0.5)
        for (int i = 0; i < 100000; i++)
            x = x * 6364136223846793005u + 1;
    a->cpu_s = thread_cpu_s() - t0;
    return NULL;
}

static struct mdp_slot *slot_of(mdp_core *core, int tid)
{
    for (unsigned i = 0, used = mdp_slots_used(); i < used; i++)
        if (atomic_load(&core->slots[i].state) == SLOT_ACTIVE &&
            atomic_load(&core->slots[i].tid) == tid)
            return &core->slots[i];
    return NULL;
}

/* mdp_thread_cpu_clock (sampler.h), the clock of slots.c's timers and of
 * perfclock.c's weights: for a thread the TID names, the clock
 * pthread_getcpuclockid gives for its pthread_t, read from another thread;
 * its time grows while that thread spins and not while it sleeps. */
struct clock_arg {
    int tid;
    clockid_t own;
    _Atomic int phase; /* 1: spinning, 2: spun 20 ms, 3: told to sleep, 4: asleep */
};

static void *spin_then_sleep(void *arg)
{
    struct clock_arg *a = arg;
    a->tid = (int)syscall(SYS_gettid);
    ck_assert_int_eq(pthread_getcpuclockid(pthread_self(), &a->own), 0);
    atomic_store(&a->phase, 1);
    double t0 = thread_cpu_s();
    volatile uint64_t x = 1;
    while (thread_cpu_s() - t0 < 0.02)
        x = x * 6364136223846793005u + 1;
    atomic_store(&a->phase, 2);
    while (atomic_load(&a->phase) != 3)
        x = x * 6364136223846793005u + 1;
    atomic_store(&a->phase, 4);
    usleep(200000);
    return NULL;
}

static uint64_t clock_ns(clockid_t c)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(c, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

START_TEST(test_thread_cpu_clock_is_the_thread_own)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(mdp_thread_cpu_clock((int)syscall(SYS_gettid)), &ts), 0);
    struct clock_arg a = {0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, spin_then_sleep, &a), 0);
    while (atomic_load(&a.phase) < 2)
        usleep(1000);
    clockid_t c = mdp_thread_cpu_clock(a.tid);
    ck_assert_int_eq(c, a.own);
    uint64_t spun = clock_ns(c);
    ck_assert_uint_ge(spun, 20000000u); /* its 20 ms, not the reader's time */
    atomic_store(&a.phase, 3);
    while (atomic_load(&a.phase) != 4)
        usleep(1000);
    uint64_t asleep = clock_ns(c);
    usleep(50000);
    ck_assert_uint_lt(clock_ns(c) - asleep, 5000000u); /* its sleep costs no CPU */
    pthread_join(th, NULL);
}
END_TEST

/* A thread that registers itself and spins 0.5 s of CPU time (*a), ended:
 * its slot, still active (the slot of an ended thread retires at the
 * drain's liveness check). */
static struct mdp_slot *spin_a_thread(mdp_core *core, struct spin_arg *a)
{
    *a = (struct spin_arg){core, 0, 0, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, spin_sampled, a), 0);
    pthread_join(th, NULL);
    ck_assert(a->registered);
    struct mdp_slot *t = slot_of(core, a->tid);
    ck_assert_ptr_nonnull(t);
    return t;
}

/* --clock auto where perf_event_open was refused: the core says why and
 * takes the timer; a thread registered gets a CPU-time timer, no perf fd,
 * and is signalled (~HZ per CPU second, at most the rate); the header says
 * cpu_clock=timer, the log says why once, #stats counts it a timer thread. */
static void check_timer_fallback(struct env *e)
{
    mdp_core *core = e->core;
    ck_assert_int_eq(core->clock, MDP_CLOCK_TIMER);
    ck_assert_msg(strstr(core->clock_why, "perf_event_open refused"), "why: '%s'", core->clock_why);
    ck_assert_str_eq(mdp_perf_clock_name(core), "timer");
    ck_assert_int_eq(perf_fds_open(), 0);
    struct spin_arg a;
    struct mdp_slot *t = spin_a_thread(core, &a);
    ck_assert_msg(atomic_load(&t->perf_fd) == 0 && t->has_timer, "no timer on the thread");
    double per_s = (atomic_load(&t->samples) + atomic_load(&t->drops)) / a.cpu_s;
    ck_assert_msg(per_s >= 50 && per_s < 1.15 * core->cfg.rate,
                  "%.0f timer signals per CPU second at %u Hz", per_s, core->cfg.rate);
    ck_assert_uint_eq(atomic_load(&t->stray), 0);
    ck_assert_uint_eq(atomic_load(&core->perf_threads), 0);
    ck_assert_uint_ge(atomic_load(&core->timer_threads), 1);
    ck_assert_int_eq(perf_fds_open(), 0);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    const char *log = slurp_raw(e->log);
    ck_assert_msg(strstr(log, " cpu_clock=timer"), "%.300s", log);
    const char *why = strstr(log, "\n# sampling with CPU-time timers: perf_event_open refused");
    ck_assert_msg(why && !strstr(why + 2, "# sampling with CPU-time timers"), "%.2000s", log);
}

START_TEST(test_perf_clock_signals_at_the_rate)
{
    struct env e;
    env_clock = MDP_CLOCK_AUTO;
    open_env(&e, 0);
    env_clock = MDP_CLOCK_ADAPTIVE;
    mdp_core *core = e.core;
    if (core->clock != MDP_CLOCK_PERF) {
        /* refused here: what auto does then is what this machine can test */
        check_timer_fallback(&e);
        close_env(&e);
        return;
    }
    int fds0 = perf_fds_open();
    /* a thread registered now is clocked by perf (within the cap) */
    struct spin_arg a;
    struct mdp_slot *t = spin_a_thread(core, &a);
    ck_assert_msg(atomic_load(&t->perf_fd) > 0 && !t->has_timer, "no perf clock on the thread");
    uint64_t signals = atomic_load(&t->samples) + atomic_load(&t->drops);
    double per_s = signals / a.cpu_s;
    ck_assert_msg(per_s > 0.85 * core->cfg.rate && per_s < 1.15 * core->cfg.rate,
                  "%.0f signals per CPU second at %u Hz (%llu in %.3f s)", per_s, core->cfg.rate,
                  (unsigned long long)signals, a.cpu_s);
    ck_assert_uint_eq(atomic_load(&t->stray), 0);
    ck_assert_int_eq(perf_fds_open(), fds0 + 1);

    /* a SIGPROF from an fd that is not a clock's: no sample, no crash */
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    struct f_owner_ex own = {F_OWNER_TID, (int)syscall(SYS_gettid)};
    ck_assert_int_eq(fcntl(p[0], F_SETFL, O_ASYNC), 0);
    ck_assert_int_eq(fcntl(p[0], F_SETSIG, SIGPROF), 0);
    ck_assert_int_eq(fcntl(p[0], F_SETOWN_EX, &own), 0);
    uint64_t before = atomic_load(&e.slot->samples);
    ck_assert_int_eq(write(p[1], "x", 1), 1);
    usleep(10000);
    ck_assert_uint_eq(atomic_load(&e.slot->samples), before);
    close(p[0]);
    close(p[1]);

    /* beyond the cap: the timer */
    core->perf_cap = atomic_load(&core->perf_open);
    struct spin_arg b;
    struct mdp_slot *u = spin_a_thread(core, &b);
    ck_assert_msg(atomic_load(&u->perf_fd) == 0 && u->has_timer, "beyond the cap, no timer");
    ck_assert_uint_ge(atomic_load(&core->perf_capped), 1);
    ck_assert_int_eq(perf_fds_open(), fds0 + 1);

    /* retired: every fd closed */
    mdp_sampler_stop(core);
    ck_assert_int_eq(perf_fds_open(), 0);
    ck_assert_uint_eq(atomic_load(&core->perf_open), 0);
    close_env(&e);
}
END_TEST

/* The default (adaptive: the timer first) and a thread it serves badly: once its
 * stacks since the last look stand for 200 ms of its CPU time, a mean over
 * 6 ms a stack (the drain's counts of a busy machine, given here) moves it
 * to a perf clock every 4 ms of its CPU time, where perf works: its timer
 * gone, one perf fd, signals at ~250 a CPU second each weighing ~4
 * periods, said once and counted (clock.moved). A thread served well, or
 * judged on too little, keeps its timer. Where perf is refused, nothing
 * moves. */
static void *spin_until(void *arg)
{
    struct spin_arg *a = arg;
    a->tid = (int)syscall(SYS_gettid);
    a->registered = mdp_sampler_thread_start(a->core, 0, a->tid, 0, 0, 0) == 0;
    volatile uint64_t x = 1;
    while (!atomic_load(&a->stop))
        x = x * 6364136223846793005u + 1;
    return NULL;
}

START_TEST(test_sparse_timer_moves_to_perf)
{
    struct env e;
    open_env(&e, 0); /* the default: adaptive (env_clock) */
    mdp_core *core = e.core;
    ck_assert_int_eq(core->clock, MDP_CLOCK_TIMER);
    struct spin_arg a = {core, 0, 0, 0};
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, spin_until, &a), 0);
    struct mdp_slot *t = NULL;
    for (int i = 0; i < 2000 && !(t = slot_of(core, a.tid)); i++)
        usleep(1000);
    ck_assert_ptr_nonnull(t);
    ck_assert(t->has_timer);
    /* too little to judge: kept for the next look */
    t->win_periods = 150, t->win_signals = 5;
    mdp_sampler_housekeeping(core, 1);
    ck_assert(t->has_timer && t->win_periods == 150);
    /* served well: the tick's 4 ms a stack */
    t->win_periods = 1000, t->win_signals = 250;
    mdp_sampler_housekeeping(core, 1);
    ck_assert(t->has_timer && atomic_load(&t->perf_fd) == 0 && t->win_periods == 0);
    /* served badly: 30 stacks for a CPU second */
    t->win_periods = 1000, t->win_signals = 30;
    mdp_sampler_housekeeping(core, 1);
    if (!core->perf_ok) {
        ck_assert(t->has_timer && atomic_load(&t->perf_fd) == 0);
        ck_assert_uint_eq(atomic_load(&core->perf_moved), 0);
        fprintf(stderr, "test_sparse_timer_moves_to_perf: perf_event_open refused here: "
                        "only the refusal's side was checked\n");
    } else {
        ck_assert_msg(!t->has_timer && atomic_load(&t->perf_fd) > 0, "not moved");
        ck_assert_uint_eq(t->perf_every, 4);
        ck_assert_uint_eq(atomic_load(&core->perf_moved), 1);
        /* its signals now: ~250 a CPU second, each ~4 periods */
        uint64_t s0 = atomic_load(&t->samples);
        uint64_t c0 = clock_ns(mdp_thread_cpu_clock(a.tid));
        while (clock_ns(mdp_thread_cpu_clock(a.tid)) - c0 < 400000000u)
            usleep(10000);
        double cpu = (clock_ns(mdp_thread_cpu_clock(a.tid)) - c0) / 1e9;
        double per_s = (atomic_load(&t->samples) - s0) / cpu;
        ck_assert_msg(per_s > 150 && per_s < 320, "%.0f perf signals a CPU second", per_s);
        ck_assert_uint_eq(atomic_load(&t->stray), 0);
    }
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    const char *log = slurp_raw(e.log);
    if (core->perf_ok) {
        const char *note = strstr(log, "\n# sampling: the CPU-time timer came once per 33.3 ms");
        ck_assert_msg(note && !strstr(note + 2, "# sampling: the CPU-time timer came"), "%.3000s",
                      log);
        ck_assert_msg(strstr(log, " clock.moved=1 "), "%.3000s", log);
    } else {
        ck_assert_msg(strstr(log, " clock.moved=0 ") && !strstr(log, "CPU-time timer came"),
                      "%.3000s", log);
    }
    close_env(&e);

    /* --clock timer: the timer alone, so a thread it serves badly keeps
     * it, whether perf works here or not (perf_ok: no event was opened) */
    env_clock = MDP_CLOCK_TIMER;
    open_env(&e, 0);
    env_clock = MDP_CLOCK_ADAPTIVE;
    core = e.core;
    ck_assert_int_eq(core->clock, MDP_CLOCK_TIMER);
    ck_assert_int_eq(core->perf_ok, 0);
    a = (struct spin_arg){core, 0, 0, 0};
    ck_assert_int_eq(pthread_create(&th, NULL, spin_until, &a), 0);
    t = NULL;
    for (int i = 0; i < 2000 && !(t = slot_of(core, a.tid)); i++)
        usleep(1000);
    ck_assert_ptr_nonnull(t);
    t->win_periods = 1000, t->win_signals = 30;
    mdp_sampler_housekeeping(core, 1);
    ck_assert(t->has_timer && atomic_load(&t->perf_fd) == 0);
    ck_assert_uint_eq(atomic_load(&core->perf_moved), 0);
    atomic_store(&a.stop, 1);
    pthread_join(th, NULL);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    log = slurp_raw(e.log);
    ck_assert_msg(strstr(log, " clock.moved=0 ") && strstr(log, " cpu_clock=timer") &&
                      !strstr(log, "CPU-time timer came"),
                  "%.3000s", log);
    close_env(&e);
}
END_TEST

/* The refusal forced (MDPROFILE_TEST_PERF=refuse, as a container's seccomp
 * or perf_event_paranoid 3 would refuse): --clock auto takes the timer
 * (check_timer_fallback); --clock perf starts no core, and says why. */
START_TEST(test_perf_refused_falls_back_to_the_timer)
{
    setenv("MDPROFILE_TEST_PERF", "refuse", 1);
    struct env e;
    env_clock = MDP_CLOCK_AUTO;
    open_env(&e, 0);
    env_clock = MDP_CLOCK_ADAPTIVE;
    check_timer_fallback(&e);
    close_env(&e);

    mdp_config cfg;
    mdp_config_default(&cfg);
    cfg.clock = MDP_CLOCK_PERF;
    snprintf(cfg.output, sizeof cfg.output, "/tmp/mdp-test-core-perf-%d.log", (int)getpid());
    mdp_runtime_ops ops = {.miss = fake_miss, .il_map = fake_il_map};
    mdp_core *core = NULL;
    char err[256] = "";
    ck_assert_int_ne(mdp_core_new(&core, &cfg, &ops, "test", 0, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "--clock perf: perf_event_open refused"), "%s", err);
    unlink(cfg.output);
    unsetenv("MDPROFILE_TEST_PERF");
}
END_TEST

/* The header names the folder the core library was loaded from, encoded so
 * that the value holds no space; the first core library wins. Every folder
 * a module came from that is not a framework's is in folders=, once each
 * (a module of a relative path, as a single-file bundle's, is in none: it
 * names the executable in bundles=), and one first seen after the header
 * comes in a #folders line of the next write, once. */
START_TEST(test_header_names_the_framework_folder)
{
    struct env e;
    open_env(&e, 0);
    mdp_core *core = e.core;
    load_everything(&e, core); /* not a core library; no folder */
    size_t lib_len;
    void *lib = map_file(MONO_45_DIR "/mscorlib.dll", &lib_len); /* Mono: a test dependency */
    mdp_module_desc d = {
        .base = lib, .path = "/opt/dot net/100%/fw/mscorlib.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 1, &d), 0);
    mdp_module_desc d2 = {.base = lib, .path = "/elsewhere/mscorlib.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 2, &d2), 0);
    mdp_module_desc d3 = {.base = lib, .path = "/elsewhere/again.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 3, &d3), 0);
    /* a path relative to a single-file bundle: the executable is named */
    mdp_module_desc d6 = {.base = lib, .path = "Bundled.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 6, &d6), 0);
    ck_assert_int_eq(mdp_log_flush(core, NULL, 0), 0);
    mdp_module_desc d4 = {.base = lib, .path = "/late/one.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 4, &d4), 0);
    mdp_module_desc d5 = {.base = lib, .path = "/late/two.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(core, mdp_seq(core), MOD + 5, &d5), 0);
    ck_assert_int_eq(mdp_core_finish(core, "exit"), 0);
    char *log = slurp(e.log);
    char *nl = strchr(log, '\n');
    ck_assert_ptr_nonnull(nl);
    *nl = 0;
    const char *fw = strstr(log, " framework=/opt/dot%20net/100%25/fw");
    ck_assert_msg(fw && fw[strlen(" framework=/opt/dot%20net/100%25/fw")] == ' ', "%s", log);
    char exe[4096], want[4200];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    ck_assert_int_gt(n, 0);
    exe[n] = 0;
    snprintf(want, sizeof want, " bundles=%s ", exe);
    ck_assert_msg(strstr(log, " folders=/opt/dot%20net/100%25/fw,/elsewhere ") &&
                      !strstr(log, "frameworks=") && !strstr(log, "late") &&
                      (strchr(exe, ' ') || strchr(exe, '%') || strstr(log, want)),
                  "%s", log);
    const char *rest = nl + 1, *line = strstr(rest, "#folders /late\n");
    ck_assert_msg(line && (line == rest || line[-1] == '\n') && !strstr(line + 1, "#folders"), "%s",
                  rest);
    close_env(&e);
    munmap(lib, lib_len);
}
END_TEST

/* ---- images in place ---------------------------------------------------------- */

/* A module laid out as CoreCLR's loader lays out a ReadyToRun image on
 * Linux: one PROT_NONE reservation, the header page and each section
 * mapped over it from the file (MAP_PRIVATE|MAP_FIXED), gaps between. The
 * file is HelloWorld.dump, a loader layout saved to disk (file offset =
 * RVA): headers, .text at 0x2000, .rsrc at 0x4000, .reloc at 0x6000, a
 * page each. Right after the reservation's trailing gap sits a neighbour
 * that must not count as the image: a shared view of the same file (as the
 * runtime's flat view is), or anonymous readable memory. */
struct laid_out {
    uint8_t *res; /* the reservation: image 0x7000, trailing gap, neighbour page */
    size_t len;
    int fd;
};

/* Code for the executable .text of lay_out(): a call rel32 and a call
 * [rip+disp32] in the page's padding (the dump's .text ends at 0x698). */
#define TEXT_CALLS 0xf00
static const uint8_t text_calls[] = {0xe8, 0, 0, 0, 0, 0x90, 0xff, 0x15, 0, 0, 0, 0, 0x90};

static void lay_out_x(struct laid_out *l, int neighbour_shared, int exec_text);

static void lay_out(struct laid_out *l, int neighbour_shared)
{
    lay_out_x(l, neighbour_shared, 0);
}

/* exec_text: .text mapped r-x as CoreCLR maps a ReadyToRun image's code
 * (written first, copy-on-write, still the file's mapping), with
 * text_calls at TEXT_CALLS. */
static void lay_out_x(struct laid_out *l, int neighbour_shared, int exec_text)
{
    char path[1024];
    static const size_t parts[] = {0x0000, 0x2000, 0x4000, 0x6000};
    l->fd = open(src_path(path, sizeof path, "data/corpus/asmresolver/HelloWorld.dump"), O_RDONLY);
    ck_assert_int_ge(l->fd, 0);
    l->len = 0x9000;
    l->res = mmap(NULL, l->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(l->res, MAP_FAILED);
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        int text = exec_text && parts[i] == 0x2000;
        ck_assert_ptr_eq(mmap(l->res + parts[i], 0x1000, text ? PROT_READ | PROT_WRITE : PROT_READ,
                              MAP_PRIVATE | MAP_FIXED, l->fd, (off_t)parts[i]),
                         l->res + parts[i]);
        if (text) {
            memcpy(l->res + parts[i] + TEXT_CALLS, text_calls, sizeof text_calls);
            ck_assert_msg(mprotect(l->res + parts[i], 0x1000, PROT_READ | PROT_EXEC) == 0,
                          "mprotect r-x: %s", strerror(errno));
        }
    }
    void *nb = neighbour_shared
                   ? mmap(l->res + 0x8000, 0x1000, PROT_READ, MAP_SHARED | MAP_FIXED, l->fd, 0)
                   : mmap(l->res + 0x8000, 0x1000, PROT_READ,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ck_assert_ptr_eq(nb, l->res + 0x8000);
}

static void unlay(struct laid_out *l)
{
    munmap(l->res, l->len);
    close(l->fd);
}

/* The ranges of lay_out's image: its four pages, from its base. */
static size_t check_laid_out_ranges(const struct laid_out *l, mdt_mem_range *r)
{
    size_t n = mdp_image_ranges(l->res, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL);
    ck_assert_uint_eq(n, 4);
    for (size_t i = 0; i < n; i++) {
        ck_assert_ptr_eq(r[i].start, l->res + 0x2000 * i);
        ck_assert_uint_eq(r[i].len, 0x1000);
    }
    return n;
}

START_TEST(test_image_ranges_are_the_image_own_mappings)
{
    /* as the kernel answers (PROCMAP_QUERY since Linux 6.11), then from
     * the text as older kernels give it */
    for (int i = 0; i < 4; i++) {
        int shared = i % 2;
        mdp_maps_text_only(i >= 2);
        struct laid_out l;
        lay_out(&l, shared);
        mdt_mem_range r[MDP_MAX_IMAGE_RANGES];
        size_t n = check_laid_out_ranges(&l, r);
        /* From inside a mapping on: the rest of it first. */
        n = mdp_image_ranges(l.res + 0x2100, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL);
        ck_assert_uint_eq(n, 3);
        ck_assert_ptr_eq(r[0].start, l.res + 0x2100);
        ck_assert_uint_eq(r[0].len, 0xf00);
        /* At most max ranges; a gap is not readable. */
        ck_assert_uint_eq(mdp_image_ranges(l.res, 1, r, 2, NULL, NULL), 2);
        ck_assert_uint_eq(mdp_image_ranges(l.res + 0x1000, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL),
                          0);
        /* Anonymous memory: that one mapping. */
        n = mdp_image_ranges(l.res + 0x8000, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(r[0].len, 0x1000);
        unlay(&l);
    }
    mdp_maps_text_only(0);
}
END_TEST

/* A loader layout the runtime made in anonymous memory (a single-file
 * bundle's compressed assembly, inflated, then copied section by section
 * into an allocation of SizeOfImage with each section's protection): the
 * anonymous mappings that follow the base, cut at SizeOfImage (0x8000 in
 * HelloWorld.dump, whose .reloc page ends at 0x7000) even where a
 * neighbour with the same protection merged with the last one; its r-x
 * section is its code. A flat layout there, or a header that gives no
 * size, is the one mapping. */
START_TEST(test_image_ranges_of_an_anonymous_loader_layout)
{
    char path[1024];
    size_t dump_len = 0;
    uint8_t *dump =
        map_file(src_path(path, sizeof path, "data/corpus/asmresolver/HelloWorld.dump"), &dump_len);
    ck_assert_uint_eq(dump_len, 0x7000);
    uint8_t *a = mmap(NULL, 0xa000, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(a, MAP_FAILED);
    memcpy(a, dump, dump_len);
    static const struct {
        size_t at;
        int prot;
    } prot[] = {{0x0000, PROT_READ}, {0x1000, PROT_NONE}, {0x2000, PROT_READ | PROT_EXEC},
                {0x3000, PROT_NONE}, {0x4000, PROT_READ}, {0x5000, PROT_NONE},
                {0x6000, PROT_READ}, {0x7000, PROT_READ}, {0x8000, PROT_READ},
                {0x9000, PROT_READ}};
    for (size_t i = 0; i < sizeof prot / sizeof prot[0]; i++)
        ck_assert_int_eq(mprotect(a + prot[i].at, 0x1000, prot[i].prot), 0);
    mdt_mem_range whole = {dump, dump_len};
    mdt_image *ondisk = NULL;
    uint8_t mv[16], want[16];
    ck_assert_int_eq(mdt_image_open_mapped_ranges(NULL, &ondisk, "dump", dump, &whole, 1, 0), 0);
    ck_assert_int_eq(mdt_image_mvid(want, ondisk), 0);
    mdt_image_close(ondisk);
    for (int text = 0; text < 2; text++) {
        mdp_maps_text_only(text);
        mdt_mem_range r[MDP_MAX_IMAGE_RANGES], x[MDP_MAX_IMAGE_RANGES];
        size_t nx = 99;
        ck_assert_uint_eq(mdp_image_ranges(a, 1, r, MDP_MAX_IMAGE_RANGES, x, &nx), 4);
        for (size_t i = 0; i < 3; i++) {
            ck_assert_ptr_eq(r[i].start, a + 0x2000 * i);
            ck_assert_uint_eq(r[i].len, 0x1000);
        }
        ck_assert_ptr_eq(r[3].start, a + 0x6000);
        ck_assert_uint_eq(r[3].len, 0x2000); /* to SizeOfImage, not the merged mapping's end */
        ck_assert_uint_eq(nx, 1);
        ck_assert_ptr_eq(x[0].start, a + 0x2000);
        ck_assert_uint_eq(x[0].len, 0x1000);
        /* the image reads from those ranges alone */
        mdt_image *img = NULL;
        ck_assert_int_eq(mdt_image_open_mapped_ranges(NULL, &img, "HelloWorld.dll", a, r, 4, 0), 0);
        ck_assert_int_eq(mdt_image_mvid(mv, img), 0);
        ck_assert_int_eq(memcmp(mv, want, 16), 0);
        mdt_image_close(img);
        /* not a loader layout: the one mapping, no code */
        nx = 99;
        ck_assert_uint_eq(mdp_image_ranges(a, 0, r, MDP_MAX_IMAGE_RANGES, x, &nx), 1);
        ck_assert_uint_eq(r[0].len, 0x1000);
        ck_assert_uint_eq(nx, 0);
    }
    /* a header that says no size: the one mapping */
    ck_assert_int_eq(mprotect(a, 0x1000, PROT_READ | PROT_WRITE), 0);
    a[0] = 'X';
    ck_assert_int_eq(mprotect(a, 0x1000, PROT_READ), 0);
    mdt_mem_range r[MDP_MAX_IMAGE_RANGES];
    ck_assert_uint_eq(mdp_image_ranges(a, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL), 1);
    ck_assert_uint_eq(r[0].len, 0x1000);
    mdp_maps_text_only(0);
    munmap(a, 0xa000);
    munmap(dump, dump_len);
}
END_TEST

/* The same among thousands of mappings (a runtime's process has that many;
 * /proc/self/maps then spans many reads, lines cut at every read's end):
 * each page of a reservation below the image protected unlike its
 * neighbours is a mapping of its own. */
START_TEST(test_image_ranges_among_thousands_of_mappings)
{
    struct laid_out l;
    lay_out(&l, 0);
    enum { PAGES = 6000 };
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    unsigned char *many = mmap(NULL, PAGES * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(many, MAP_FAILED);
    for (size_t i = 0; i < PAGES; i += 2)
        ck_assert_int_eq(mprotect(many + i * page, page, PROT_READ), 0);
    for (int text = 0; text < 2; text++) {
        mdp_maps_text_only(text);
        mdt_mem_range r[MDP_MAX_IMAGE_RANGES];
        size_t n = check_laid_out_ranges(&l, r);
        /* and every one of the many is found as what it is */
        for (size_t i = 0; i < PAGES; i += 997) {
            n = mdp_image_ranges(many + i * page, 1, r, MDP_MAX_IMAGE_RANGES, NULL, NULL);
            ck_assert_uint_eq(n, i % 2 == 0 ? 1 : 0);
            if (n)
                ck_assert_uint_eq(r[0].len, page);
        }
    }
    mdp_maps_text_only(0);
    munmap(many, PAGES * page);
    unlay(&l);
}
END_TEST

/* The executable mappings of such an image (its ReadyToRun code) are
 * reported apart, and published to the handler while the module lives: a
 * return address there, right after a call, is accepted as managed code
 * the map has not learnt yet; one elsewhere in the image, or not after a
 * call, or in an unloaded module's code, is not. */
/* The handler's way through ReadyToRun code the map has not learnt: the
 * method holding an address, from the image's RuntimeFunctions table
 * (sorted RVA triples) published with its executable range; gaps between
 * methods, addresses before the first, entries reaching outside the
 * executable range and ranges without a table give nothing. */
START_TEST(test_r2r_function_of_an_address)
{
    struct env e;
    open_env(&e, 0);
    static uint8_t image[0x2000];
    uintptr_t base = (uintptr_t)image;
    static const uint32_t rf[] = {0x1100, 0x1180, 0, 0x1200, 0x1260, 0, 0x1300, 0x2400, 0};
    struct mdp_exec_table *t = malloc(sizeof *t + 2 * sizeof t->r[0]);
    ck_assert_ptr_nonnull(t);
    t->n = 2;
    t->r[0] = (struct mdp_exec_range){base + 0x1000, base + 0x2000, base, rf, 3};
    t->r[1] = (struct mdp_exec_range){base + 0x2000 + 4096, base + 0x3000 + 4096, base, NULL, 0};
    free(atomic_exchange(&e.core->exec, t));
    uintptr_t start = 0;
    size_t size = 0;
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x1110, &start, &size), 1);
    ck_assert_uint_eq(start, base + 0x1100);
    ck_assert_uint_eq(size, 0x80);
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x125f, &start, &size), 1);
    ck_assert_uint_eq(start, base + 0x1200);
    ck_assert_uint_eq(size, 0x60);
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x1180, &start, &size), 0); /* a gap */
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x1050, &start, &size), 0); /* before */
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x1310, &start, &size), 0); /* outside */
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x2010 + 4096, &start, &size), 0);
    ck_assert_int_eq(mdp_exec_r2r_function(e.core, base + 0x0f00, &start, &size), 0);
    close_env(&e);
}
END_TEST

START_TEST(test_exec_ranges_of_a_module_image)
{
    struct env e;
    struct laid_out l;
    open_env(&e, 0);
    lay_out_x(&l, 1, 1);
    mdt_mem_range r[MDP_MAX_IMAGE_RANGES], x[MDP_MAX_IMAGE_RANGES];
    size_t nx = 99;
    ck_assert_uint_eq(mdp_image_ranges(l.res, 1, r, MDP_MAX_IMAGE_RANGES, x, &nx), 4);
    ck_assert_uint_eq(nx, 1);
    ck_assert_ptr_eq(x[0].start, l.res + 0x2000);
    ck_assert_uint_eq(x[0].len, 0x1000);
    uintptr_t call1 = (uintptr_t)l.res + 0x2000 + TEXT_CALLS + 5, call2 = call1 + 7;
    ck_assert_int_eq(mdp_exec_return_site(e.core, call1), 0); /* no module yet */
    enum { MOD_HELLO = 0x6000 };
    mdp_module_desc d = {.base = l.res, .path = "HelloWorld.dll"};
    ck_assert_int_ge(mdp_ev_module_load(e.core, mdp_seq(e.core), MOD_HELLO, &d), 0);
    ck_assert_int_eq(mdp_exec_return_site(e.core, call1), 1);
    ck_assert_int_eq(mdp_exec_return_site(e.core, call2), 1);
    ck_assert_int_eq(mdp_exec_return_site(e.core, call1 + 1), 0); /* not after a call */
    ck_assert_int_eq(mdp_exec_return_site(e.core, (uintptr_t)l.res + 0x2000),
                     0); /* call before the range */
    ck_assert_int_eq(mdp_exec_return_site(e.core, (uintptr_t)l.res + 0x4010),
                     0); /* .rsrc: not code */
    ck_assert_int_eq(mdp_exec_return_site(e.core, (uintptr_t)l.res + 0x8010),
                     0); /* the neighbour */
    /* the same image as a flat layout is no code */
    enum { MOD_FLAT = 0x6100 };
    mdp_module_desc f = {.base = l.res, .path = "HelloWorld.dll", .flags = MDP_MODULE_FLAT};
    ck_assert_int_ge(mdp_ev_module_load(e.core, mdp_seq(e.core), MOD_FLAT, &f), 0);
    ck_assert_uint_eq(mdp_module_get(e.core, MOD_FLAT)->nexec, 0);
    ck_assert_int_ge(mdp_ev_module_unload(e.core, mdp_seq(e.core), MOD_HELLO), 0);
    ck_assert_int_eq(mdp_exec_return_site(e.core, call1), 0);
    mdp_core_free(e.core);
    unlay(&l);
    unlink(e.log);
    munmap(e.file, e.file_len);
}
END_TEST

/* A module load merges the new module's ranges into the published table
 * (execmap.c) instead of rebuilding it from every module: the result is
 * what a rebuild gives, in address order, whatever order the images come
 * in; a module replaced under its ID leaves none of the old one's ranges. */
START_TEST(test_exec_table_merged_on_load_is_a_rebuild)
{
    struct env e;
    struct laid_out l[3];
    open_env(&e, 0);
    for (int i = 0; i < 3; i++)
        lay_out_x(&l[i], 1, 1);
    /* the highest image first, then the lowest, then the middle one: each
     * merge puts ranges before, after and between the published ones */
    int by[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (l[by[j]].res < l[by[i]].res) {
                int x = by[i];
                by[i] = by[j];
                by[j] = x;
            }
    const int order[3] = {by[2], by[0], by[1]};
    for (int k = 0; k < 3; k++) {
        mdp_module_desc d = {.base = l[order[k]].res, .path = "HelloWorld.dll"};
        ck_assert_int_ge(mdp_ev_module_load(e.core, mdp_seq(e.core), 0x6000 + 0x100 * order[k], &d),
                         0);
    }
    const struct mdp_exec_table *t = atomic_load(&e.core->exec);
    ck_assert_ptr_nonnull(t);
    ck_assert_uint_eq(t->n, 3);
    struct mdp_exec_range merged[3];
    memcpy(merged, t->r, sizeof merged);
    for (int i = 1; i < 3; i++)
        ck_assert_uint_lt(merged[i - 1].hi, merged[i].lo);
    pthread_mutex_lock(&e.core->mods_lock);
    ck_assert_int_eq(mdp_exec_publish(e.core), 0);
    pthread_mutex_unlock(&e.core->mods_lock);
    t = atomic_load(&e.core->exec);
    ck_assert_uint_eq(t->n, 3);
    for (int i = 0; i < 3; i++) { /* field by field: the padding may differ */
        ck_assert_uint_eq(t->r[i].lo, merged[i].lo);
        ck_assert_uint_eq(t->r[i].hi, merged[i].hi);
        ck_assert_uint_eq(t->r[i].base, merged[i].base);
        ck_assert_ptr_eq(t->r[i].rf, merged[i].rf);
        ck_assert_uint_eq(t->r[i].nrf, merged[i].nrf);
        ck_assert_uint_eq(t->r[i].module, merged[i].module);
    }
    /* module 1's ID now names image 2's twin: image 1's code is no one's */
    struct laid_out twin;
    lay_out_x(&twin, 1, 1);
    mdp_module_desc d = {.base = twin.res, .path = "HelloWorld.dll"};
    ck_assert_int_ge(mdp_ev_module_load(e.core, mdp_seq(e.core), 0x6100, &d), 0);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(
            mdp_exec_return_site(e.core, (uintptr_t)l[i].res + 0x2000 + TEXT_CALLS + 5), i != 1);
    ck_assert_int_eq(mdp_exec_return_site(e.core, (uintptr_t)twin.res + 0x2000 + TEXT_CALLS + 5),
                     1);
    mdp_core_free(e.core);
    for (int i = 0; i < 3; i++)
        unlay(&l[i]);
    unlay(&twin);
    unlink(e.log);
    munmap(e.file, e.file_len);
}
END_TEST

/* The module event opens such a layout in place (no flat view of the file
 * exists here to fall back on) and names come from it. */
START_TEST(test_module_laid_out_with_holes_opens_in_place)
{
    struct env e;
    struct laid_out l;
    open_env(&e, 0);
    lay_out(&l, 1);
    enum { MOD_HELLO = 0x6000 };
    mdp_module_desc d = {.base = l.res, .path = "HelloWorld.dll"};
    ck_assert_int_ge(mdp_ev_module_load(e.core, mdp_seq(e.core), MOD_HELLO, &d), 0);
    struct mdp_module *m = mdp_module_get(e.core, MOD_HELLO);
    ck_assert_ptr_nonnull(m);
    ck_assert_ptr_nonnull(m->image);
    ck_assert_int_eq(mdt_image_kind(m->image), MDT_KIND_PE_MAPPED);
    ck_assert(m->has_identity);
    ck_assert_str_eq(m->identity.name, "HelloWorld");
    mdt_row r;
    const char *name;
    ck_assert_int_eq(mdt_row_get(&r, m->image, MDT_TABLE_TypeDef, 2), 0);
    ck_assert_int_eq(mdt_row_string(&name, NULL, &r, MDT_COL_TypeDef_TypeName), 0);
    ck_assert_str_eq(name, "Program");
    ck_assert_int_ge(mdp_ev_module_unload(e.core, mdp_seq(e.core), MOD_HELLO), 0);
    mdp_core_free(e.core);
    unlay(&l);
    unlink(e.log);
    munmap(e.file, e.file_len);
}
END_TEST

Suite *suite(void)
{
    Suite *s = suite_create("profiler core");
    TCase *t = tcase_create("core");
    tcase_add_test(t, test_ring_wraps_and_keeps_order);
    tcase_add_test(t, test_pmap_matches_a_reference);
    tcase_add_test(t, test_smap_keys_are_copied);
    tcase_add_test(t, test_config_text_round_trip);
    tcase_add_test(t, test_r2rnames_is_a_setting);
    tcase_add_test(t, test_settings_are_documented);
    tcase_add_test(t, test_mode_lists);
    tcase_add_test(t, test_prolog_decode_shapes);
    tcase_add_test(t, test_unwind_rsp_frame_body_and_prolog);
    tcase_add_test(t, test_unwind_rbp_frame_and_pop_rbp);
    tcase_add_test(t, test_osr_tier0_record_from_the_prolog);
    tcase_add_test(t, test_unwind_osr_frame_asks_for_a_scan);
    tcase_add_test(t, test_follows_call_forms);
    tcase_add_test(t, test_samples_to_log_across_an_unload);
    tcase_add_test(t, test_class_id_reused_after_an_unload_names_the_new_class);
    tcase_add_test(t, test_split_version_names_its_cold_part);
    tcase_add_test(t, test_exec_table_merged_on_load_is_a_rebuild);
    tcase_add_test(t, test_retire_waits_for_a_callback_in_flight);
    tcase_add_test(t, test_retire_waits_for_enough_tombstones);
    tcase_add_test(t, test_r2r_function_of_an_address);
    tcase_add_test(t, test_native_frames_name_their_elf_object);
    tcase_add_test(t, test_activities_nest_per_thread);
    tcase_add_test(t, test_records_sorted_without_names);
    tcase_add_test(t, test_session_ends_after_its_samples);
    tcase_add_test(t, test_idle_drain_backs_off_and_a_poke_wakes_it);
    tcase_add_test(t, test_calls_count_every_way_out);
    tcase_add_test(t, test_sample_without_room_is_dropped);
    tcase_add_test(t, test_header_names_the_framework_folder);
    tcase_add_test(t, test_log_names);
    tcase_add_test(t, test_channel_encoding);
    tcase_add_test(t, test_framework_folders);
    tcase_add_test(t, test_log_written_in_pieces);
    tcase_add_test(t, test_signal_stats_are_replaced);
    tcase_add_test(t, test_sparse_timer_is_said);
    tcase_add_test(t, test_failed_write_is_undone_and_retried);
    tcase_add_test(t, test_elf_lines_follow_the_writes);
    tcase_add_test(t, test_cut_stack_ends_truncated);
    tcase_add_test(t, test_thread_and_slice);
    tcase_add_test(t, test_walk_cache_never_outlives_the_code);
    tcase_add_test(t, test_walk_reads_stack_words_asan_poisoned);
    tcase_add_test(t, test_unwind_step_agrees_with_the_decoder);
    tcase_add_test(t, test_thread_role_read_while_new_and_at_writes);
    tcase_add_test(t, test_scan_takes_a_blocked_thread_with_its_stack);
    tcase_add_test(t, test_thread_cpu_clock_is_the_thread_own);
    tcase_add_test(t, test_perf_clock_signals_at_the_rate);
    tcase_add_test(t, test_sparse_timer_moves_to_perf);
    tcase_add_test(t, test_perf_refused_falls_back_to_the_timer);
    tcase_add_test(t, test_record_kinds_are_documented);
    tcase_add_test(t, test_r2rnames_stats_only_where_the_image_names);
    tcase_add_test(t, test_image_ranges_are_the_image_own_mappings);
    tcase_add_test(t, test_image_ranges_among_thousands_of_mappings);
    tcase_add_test(t, test_image_ranges_of_an_anonymous_loader_layout);
    tcase_add_test(t, test_module_laid_out_with_holes_opens_in_place);
    tcase_add_test(t, test_exec_ranges_of_a_module_image);
    suite_add_tcase(s, t);
    return s;
}

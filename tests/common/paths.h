/* Where tests find their inputs: MDT_TOP_SRCDIR when set (the test harness
 * exports it, tests/local.mk), else the source tree configure was run for
 * (config.h), so that a harness or replayer run by hand from anywhere
 * finds its corpus; the Mono framework comes from Debian's Mono. */
#ifndef MDT_TESTS_PATHS_H
#define MDT_TESTS_PATHS_H

#include "config.h"

#include <stdio.h>
#include <stdlib.h>

static inline const char *top_srcdir(void)
{
    const char *d = getenv("MDT_TOP_SRCDIR");
    if (d && *d)
        return d;
#ifdef MDT_ABS_TOP_SRCDIR
    return MDT_ABS_TOP_SRCDIR;
#else
    return ".";
#endif
}

/* top_srcdir()/rel into buf. */
static inline const char *src_path(char *buf, size_t n, const char *rel)
{
    snprintf(buf, n, "%s/%s", top_srcdir(), rel);
    return buf;
}

#define MONO_45_DIR "/usr/lib/mono/4.5"

/* For a test program that reads the Mono framework: without it, the
 * program is skipped (tests/common/check_main.c). Use once per program. */
#define MDT_TESTS_NEED_MONO                                                                        \
    const char *suite_requires(const char **package);                                              \
    const char *suite_requires(const char **package)                                               \
    {                                                                                              \
        *package = "mono-devel";                                                                   \
        return MONO_45_DIR "/mscorlib.dll";                                                        \
    }

#endif

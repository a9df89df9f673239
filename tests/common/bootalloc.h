/* For test libraries that interpose malloc & co. and forward with
 * dlsym(RTLD_NEXT): dlsym may allocate before the real functions are
 * known, so those first allocations come from a static arena that is never
 * freed. Each including file gets its own arena. */
#ifndef MDT_TESTS_BOOTALLOC_H
#define MDT_TESTS_BOOTALLOC_H

#include <stdbool.h>
#include <stddef.h>

#ifndef BOOT_ARENA_SIZE
#define BOOT_ARENA_SIZE 16384
#endif

static _Alignas(16) char boot[BOOT_ARENA_SIZE];
static size_t bootpos;

static inline void *boot_alloc(size_t n)
{
    size_t at = (bootpos + 15) & ~(size_t)15;
    if (at + n > sizeof boot)
        return NULL;
    bootpos = at + n;
    return boot + at;
}

static inline bool in_boot(const void *p)
{
    return (const char *)p >= boot && (const char *)p < boot + sizeof boot;
}

#endif

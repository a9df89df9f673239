/* A growing string under a talloc context. Appends after an allocation
 * failure are ignored and the failure is reported once, at sb_finish. */
#ifndef MDT_UTIL_STRBUF_H
#define MDT_UTIL_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

typedef struct sb {
    void *ctx;
    char *buf;
    size_t len, cap;
    int failed;
} sb;

void sb_init(sb *s, void *ctx);
void sb_add(sb *s, const char *str, size_t n);
void sb_adds(sb *s, const char *str);
void sb_addf(sb *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_addc(sb *s, char c);
/* The finished string (owned by ctx), or NULL with MDT_ENOMEM recorded. */
int sb_finish(sb *s, char **out);
void sb_discard(sb *s);

#endif

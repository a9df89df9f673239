/* What the files of libmdtools/il/ share: the one function that records a
 * located failure of a body (its region names the method: "IL of
 * 0x06000012" for the code, offsets being IL offsets; "body of
 * 0x06000012" for the header and sections, offsets from the header).
 * Included by the files of il/ only. */
#ifndef MDT_IL_IL_INT_H
#define MDT_IL_IL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include <mdtools/il.h>

int il__fail(const mdt_il_body *b, bool code, uint64_t off, int err, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

#endif

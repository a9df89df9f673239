/* mdtools: metadata tokens (ECMA-335 II.22, III.1.9). Pure functions. */
#ifndef MDTOOLS_TOKEN_H
#define MDTOOLS_TOKEN_H

#include <stdint.h>

#define MDT_TOKEN(table, rid) ((uint32_t)(table) << 24 | ((uint32_t)(rid)&0x00FFFFFFu))
#define MDT_TOKEN_TABLE(tok) ((unsigned)((uint32_t)(tok) >> 24))
#define MDT_TOKEN_RID(tok) ((uint32_t)(tok)&0x00FFFFFFu)
/* Token type of user strings (not a table). */
#define MDT_TOKEN_STRING 0x70u

#endif

/* The numbers of values stored in blobs (Constant rows, ECMA-335 II.22.9;
 * custom attribute arguments, II.23.3) as exact text: floating point as the
 * shortest text that reads back to the same bits, System.Decimal
 * (96-bit integer and scale) and 128-bit integers in decimal with GMP, for
 * value.c and the callers of <mdtools/value.h>. */
#include "config.h"

#include <gmp.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/value.h>

#include "generics/gen_int.h"

char *mdt_value_r8_format(char buf[32], double v)
{
    if (isnan(v))
        return strcpy(buf, "NaN");
    if (isinf(v))
        return strcpy(buf, v < 0 ? "-Infinity" : "Infinity");
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, 32, "%.*g", prec, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    if (v == 0 && signbit(v))
        strcpy(buf, "-0");
    return buf;
}

char *mdt_value_r4_format(char buf[32], float v)
{
    if (isnan(v))
        return strcpy(buf, "NaN");
    if (isinf(v))
        return strcpy(buf, v < 0 ? "-Infinity" : "Infinity");
    for (int prec = 1; prec <= 9; prec++) {
        snprintf(buf, 32, "%.*g", prec, (double)v);
        if (strtof(buf, NULL) == v)
            break;
    }
    if (v == 0 && signbit(v))
        strcpy(buf, "-0");
    return buf;
}

int mdt_decimal_format(void *mem_ctx, char **out, const mdt_decimal *d)
{
    uint8_t be[12];
    mpz_t z;
    if (d->scale > 28)
        return mdt__fail_simple(MDT_EINVAL, "decimal scale %u exceeds 28", d->scale);
    for (int i = 0; i < 4; i++) {
        be[i] = (uint8_t)(d->hi >> (24 - 8 * i));
        be[4 + i] = (uint8_t)(d->mid >> (24 - 8 * i));
        be[8 + i] = (uint8_t)(d->lo >> (24 - 8 * i));
    }
    mpz_init(z);
    mpz_import(z, sizeof be, 1, 1, 1, 0, be);
    char *digits = mpz_get_str(NULL, 10, z);
    mpz_clear(z);
    if (!digits)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    size_t n = strlen(digits), scale = d->scale;
    /* Digits of the integer part, then `scale` fraction digits (0-padded). */
    size_t intlen = n > scale ? n - scale : 0;
    char *s = talloc_array(mem_ctx, char, n + scale + 4);
    if (!s) {
        free(digits);
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    }
    size_t o = 0;
    if (d->negative)
        s[o++] = '-';
    if (intlen) {
        memcpy(s + o, digits, intlen);
        o += intlen;
    } else {
        s[o++] = '0';
    }
    if (scale) {
        s[o++] = '.';
        for (size_t k = n; k < scale; k++)
            s[o++] = '0';
        memcpy(s + o, digits + intlen, n - intlen);
        o += n - intlen;
    }
    s[o] = '\0';
    free(digits);
    *out = s;
    return 0;
}

int mdt_value_int128_format(void *mem_ctx, char **out, const uint8_t le[16], bool is_signed)
{
    mpz_t z;
    mpz_init(z);
    mpz_import(z, 16, -1, 1, -1, 0, le);
    if (is_signed && (le[15] & 0x80)) { /* two's complement: subtract 2^128 */
        mpz_t m;
        mpz_init(m);
        mpz_ui_pow_ui(m, 2, 128);
        mpz_sub(z, z, m);
        mpz_clear(m);
    }
    char *digits = mpz_get_str(NULL, 10, z);
    mpz_clear(z);
    if (!digits)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    *out = talloc_strdup(mem_ctx, digits);
    free(digits);
    if (!*out)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    return 0;
}

/* api-rename: off */
/* The old names (<mdtools/errors.h>, MDT_DEPRECATED_FOR), for programs
 * built against libmdtools 1:0:0. */
char *mdt_r4_format(char buf[32], float v)
{
    return mdt_value_r4_format(buf, v);
}

char *mdt_r8_format(char buf[32], double v)
{
    return mdt_value_r8_format(buf, v);
}

int mdt_int128_format(void *mem_ctx, char **out, const uint8_t le[16], bool is_signed)
{
    return mdt_value_int128_format(mem_ctx, out, le, is_signed);
}
/* api-rename: on */

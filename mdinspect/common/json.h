/* mdinspect (shell and batch): JSON text, one way for the whole program.
 * The shell's printer (print_json.c) and batch's emitters (batch/io.c,
 * emit_json.c, resolve.c) both stream JSON Lines straight into an output
 * buffer; what goes between the quotes of a string and how a number is
 * spelt is decided here only, so the two print the same bytes for the same
 * value (RFC 8259):
 *   - strings: '"' and '\' escaped, \b \f \n \r \t for those controls,
 *     \u00XX (upper-case hex) for the other bytes below 0x20; well-formed
 *     UTF-8 copied (0x7F and U+0080..U+009F too); each byte that is not
 *     part of well-formed UTF-8 replaced by U+FFFD (common/utf8.h's rule);
 *   - integers in decimal; reals as C's "%.17g" with ".0" added to one that
 *     would read back as an integer and the exponent without '+' or
 *     leading zeros ("1e20", "9.9999999999999995e-8");
 *   - tokens as the string "0xTTRRRRRR" (lower-case hex).
 * These are jansson's choices (json_dumps with JSON_COMPACT), which the
 * shell printed with before: its output stayed the same bytes.
 * Nothing here allocates; every function writes into the caller's room. */
#ifndef MDINSPECT_COMMON_JSON_H
#define MDINSPECT_COMMON_JSON_H

#include <stddef.h>
#include <stdint.h>

/* The most bytes one input byte (or one UTF-8 sequence) becomes. */
#define MDI_JSON_ESCAPE_MAX 6
/* Room enough for any number written below. */
#define MDI_JSON_NUMBER_MAX 32

/* The inside of a JSON string for s[0..n), written into dst[0..room):
 * returns the bytes written and sets *used to the bytes of s they stand
 * for. It stops early only when the next piece does not fit: with room
 * of MDI_JSON_ESCAPE_MAX or more it always makes progress, and a caller
 * that empties its buffer and calls again with the rest of s gets the same
 * bytes as one call with room enough (at most n * MDI_JSON_ESCAPE_MAX). */
size_t mdi_json_escape(char *dst, size_t room, const char *s, size_t n, size_t *used);

/* Numbers, into dst[MDI_JSON_NUMBER_MAX]; each returns its length (no NUL
 * written). mdi_json_real takes a finite value only (JSON has no NaN or
 * infinities: a caller says what it prints for those). */
size_t mdi_json_uint(char *dst, uint64_t v);
size_t mdi_json_int(char *dst, int64_t v);
size_t mdi_json_real(char *dst, double v);
/* "0xTTRRRRRR" without the quotes: 10 bytes. */
size_t mdi_json_token(char *dst, uint32_t token);

#endif

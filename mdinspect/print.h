/* mdinspect: the printer. Command handlers describe their output once, as
 * records of named fields and lists of uniform items; the printer renders it
 * either as aligned text for people or as JSON Lines for programs (one JSON
 * object per top-level record or per item of a top-level list), to one
 * FILE*. The same handler code therefore serves a terminal, a golden test
 * transcript and a JSON consumer.
 *
 * Every value call takes a JSON key (snake_case, or a column name of the
 * schema) and a text label:
 *   - label NULL  : the field exists in JSON only;
 *   - label ""    : text shows the value without a label;
 *   - otherwise   : text shows "label: value" (records) or a column headed
 *                   by the label (list items; the first item names the
 *                   columns).
 * mdi_textf() is the converse: text only.
 *
 * Text layout: a top-level record is a block of "label: value" lines whose
 * values are aligned per group of consecutive lines; a list is a table with
 * a header, numbers right-aligned, no trailing blanks. A long top-level list
 * is written in chunks of a few thousand rows (columns as wide as the
 * widest cell so far), so output streams and memory stays bounded. Blocks
 * are separated by one blank line; each file starts with a "path:" heading.
 *
 * JSON layout: each top-level record, or each item of a top-level list, is
 * written as one compact object on its own line, starting with "file" when a
 * file is set. Nested objects and lists become JSON objects and arrays.
 * Tokens are strings "0xTTRRRRRR"; other integers are numbers.
 *
 * Errors (allocation, write) are sticky: calls after one do nothing and
 * mdi_printer_failed() reports it, like ferror(). Not thread-safe. */
#ifndef MDINSPECT_PRINT_H
#define MDINSPECT_PRINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum mdi_format { MDI_FMT_TEXT, MDI_FMT_JSON };

typedef struct mdi_printer mdi_printer;

/* A bit of a flags word and its name, for mdi_flags(); ends with name NULL.
 * With a mask, a value of a multi-bit field: it applies when
 * (word & mask) == bit (e.g. the visibility field of TypeAttributes). */
typedef struct mdi_flagname {
    uint32_t bit;
    const char *name;
    uint32_t mask;
} mdi_flagname;
/* Whether entry n applies to the word v. */
bool mdi_flag_set(uint32_t v, const mdi_flagname *n);

/* List options. */
enum {
    MDI_LIST_SCALARS = 1u << 0 /* JSON: items hold one value; the array holds
                                  the values themselves, not objects */
};

/* A printer writing to `out` (borrowed), a talloc child of mem_ctx. */
mdi_printer *mdi_printer_new(void *mem_ctx, FILE *out, enum mdi_format fmt);
enum mdi_format mdi_printer_format(const mdi_printer *p);
/* Text or JSON from now on (between top-level blocks only). */
void mdi_printer_set_format(mdi_printer *p, enum mdi_format fmt);
/* Text: colour headings, table headers and errors with ANSI sequences. */
void mdi_printer_set_color(mdi_printer *p, bool on);
/* Where output goes (borrowed), e.g. a pager for one command. */
FILE *mdi_printer_output(const mdi_printer *p);
void mdi_printer_set_output(mdi_printer *p, FILE *out);
/* Forget a write error and start afresh (no blank line before the next
 * block): the shell calls it before each command. */
void mdi_printer_reset(mdi_printer *p);
/* Text: cut table cells so that a line fits in `columns` (a terminal's
 * width; the widest columns are narrowed first, a cut cell ends in an
 * ellipsis); 0 prints every cell whole (the default). */
void mdi_printer_set_max_width(mdi_printer *p, size_t columns);
/* Text: print a "path:" heading before each file's first block (default on;
 * an interactive session turns it off). */
void mdi_printer_set_headings(mdi_printer *p, bool on);
/* The file the following output is about (copied); NULL for none. Text
 * prints a heading before the next block unless the file is the same. */
void mdi_printer_set_file(mdi_printer *p, const char *path);
/* Flush `out`; call before writing to another stream sharing its terminal
 * or file, so the order of messages is kept. */
void mdi_printer_flush(mdi_printer *p);
/* True after an allocation or write error. */
bool mdi_printer_failed(const mdi_printer *p);

/* Structure. Begin/end calls must pair up. */
void mdi_record_begin(mdi_printer *p);
void mdi_record_end(mdi_printer *p);
void mdi_object_begin(mdi_printer *p, const char *key, const char *label);
void mdi_object_end(mdi_printer *p);
/* A list; `label` captions it in text (NULL: JSON only, "" no caption);
 * `empty` is what text shows for a list without items (NULL: nothing). */
void mdi_list_begin(mdi_printer *p, const char *key, const char *label, const char *empty,
                    unsigned flags);
void mdi_list_end(mdi_printer *p);
/* Write what a top-level list holds so far (text: the rows, as a chunk;
 * JSON: items are written as they end) and flush the output: a command
 * that works long calls it when it has results to show. */
void mdi_list_flush(mdi_printer *p);
void mdi_item_begin(mdi_printer *p);
void mdi_item_end(mdi_printer *p);

/* Values. */
/* Plain string (s NULL: JSON null, text "-"); control characters and bytes
 * that are not UTF-8 are escaped in text and replaced by U+FFFD in JSON. */
void mdi_str(mdi_printer *p, const char *key, const char *label, const char *s);
/* String data from the image, shown quoted and escaped in text. */
void mdi_quoted(mdi_printer *p, const char *key, const char *label, const char *s, size_t len);
void mdi_uint(mdi_printer *p, const char *key, const char *label, uint64_t v);
/* Signed integer: text and JSON in decimal. */
void mdi_int(mdi_printer *p, const char *key, const char *label, int64_t v);
/* Floating-point number: text `text` (the caller's exact form); JSON a
 * number, or the string "NaN", "Infinity" or "-Infinity". */
void mdi_real(mdi_printer *p, const char *key, const char *label, double v, const char *text);
/* Text "0x" and at least `digits` hex digits; JSON number. */
void mdi_hex(mdi_printer *p, const char *key, const char *label, uint64_t v, int digits);
/* Metadata token: "0xTTRRRRRR" in both. */
void mdi_token(mdi_printer *p, const char *key, const char *label, uint32_t token);
/* Text "yes"/"no"; JSON true/false. */
void mdi_bool(mdi_printer *p, const char *key, const char *label, bool v);
/* 16 GUID bytes, formatted; NULL: JSON null, text "nil". */
void mdi_guid(mdi_printer *p, const char *key, const char *label, const uint8_t *guid);
/* Nothing to show: JSON null; text shows `text`, or omits the field when
 * `text` is NULL. */
void mdi_none(mdi_printer *p, const char *key, const char *label, const char *text);
/* A value that could not be read: text "<error: msg>", JSON {"error": msg}. */
void mdi_error(mdi_printer *p, const char *key, const char *label, const char *msg);
/* The rest of a list item could not be read: text ends the row with
 * "<error: msg>" outside the columns; JSON adds `key`: {"error": msg}. */
void mdi_item_error(mdi_printer *p, const char *key, const char *msg);
/* Flags word: text "NAME, NAME, 0xREST" (names, not hex: "none" for 0
 * without a name); JSON `key` as a number and `key`_names as an array of
 * the names (unknown bits as "0x..."). */
void mdi_flags(mdi_printer *p, const char *key, const char *label, uint32_t v,
               const mdi_flagname *names);
/* #Blob reference: text "blob@0xOFF[len]"; JSON {"offset": n, "length": n}. */
void mdi_blob(mdi_printer *p, const char *key, const char *label, uint32_t offset, uint32_t len);
/* Run of rows: text "first..end" (tokens, end exclusive); JSON
 * {"first": token, "end": token}. */
void mdi_range(mdi_printer *p, const char *key, const char *label, uint32_t first, uint32_t end);
/* Annotate the value just written: text appends " (note)" to it; JSON adds
 * `key` with the note as a string (key NULL: text only). */
void mdi_note(mdi_printer *p, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Text only: a labelled line or cell (label as for values), or at top level
 * a line of its own. */
void mdi_textf(mdi_printer *p, const char *label, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Escape a string as text output shows it (quoted: surrounded by '"' with
 * '"' and '\' escaped), under mem_ctx. Exposed for error messages. */
char *mdi_escape(void *mem_ctx, const char *s, size_t len, bool quoted);

#endif

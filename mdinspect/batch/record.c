/* mdinspect batch: what kind of line each input line is, told apart line by
 * line (doc/profile-log.md for the profiler's lines): `#mdprofile` header,
 * `#stats`, other `#` comments, blank lines, records `stack`, `call`,
 * `alloc`, `throw`, `wait` (kind, count, [bytes or nanoseconds,] [thread
 * and slice,] [a throw's type,] frames, [TAB debug names]; a format-2
 * `call` has its leaves, tail calls and unwinds after the count, a
 * format-4 `stack` its thread ID and time slice, each told from the older
 * formats by the line alone: no frame is a decimal number), plain
 * `MVID TOKEN [DESC...]` lines, and plain `PATH TOKEN` lines (the path may
 * hold spaces: the token is the last field). A line whose structure is
 * broken (a count that is no number, a frame count outside the kind's
 * rule, an unknown record word) is malformed; a frame that does not
 * resolve leaves its record well-formed, with that frame unresolved. */
#include "config.h"

#include <string.h>

#include "batch/batch.h"
#include "batch/native.h"
#include "batch/parse.h"

/* A decimal number >= 1 without sign or leading zeros, up to 2^63. */
static bool count(const char *s, size_t n, uint64_t *v)
{
    uint64_t x = 0;
    if (n == 0 || n > 18 || s[0] == '0')
        return false;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        x = x * 10 + (uint64_t)(s[i] - '0');
    }
    *v = x;
    return true;
}

/* A decimal number >= 0 without sign or leading zeros, up to 2^63. */
static bool count0(const char *s, size_t n, uint64_t *v)
{
    if (n == 1 && s[0] == '0') {
        *v = 0;
        return true;
    }
    return count(s, n, v);
}

static bool all_digits(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] < '0' || s[i] > '9')
            return false;
    return n > 0;
}

/* Whether the line starts with an MVID and a space (the MVID in *mvid). */
static bool mvid_field(const char *s, size_t n, uint8_t mvid[16])
{
    return n >= 33 && s[32] == ' ' && mdb_parse_mvid(s, 32, mvid);
}

static void malformed(mdb_record *rec, const char *why)
{
    rec->kind = MDB_MALFORMED;
    rec->why = why;
    rec->nframes = 0;
    rec->unresolved = true;
}

/* The frame is not read here: its cache lines are on their way while the
 * record's other frames resolve (unresolved() reads them after). */
static void add(mdb_record *rec, const mdb_frame *f)
{
    rec->has_il[rec->nframes] = false;
    rec->frames[rec->nframes++] = f;
}

static void unresolved(mdb_record *rec)
{
    for (size_t i = 0; i < rec->nframes; i++)
        if (rec->frames[i]->status != MDB_OK && rec->frames[i]->status != MDB_SPECIAL)
            rec->unresolved = true;
}

static void parse_record(mdb_resolver *r, mdb_record *rec, const char *s, size_t n)
{
    const char *tab = memchr(s, '\t', n), *p, *end;
    size_t k;
    if (tab)
        n = (size_t)(tab - s); /* debug names: for people comparing, not resolved */
    end = s + n;
    /* the keyword alone (a log cut right after it): no count to read */
    if (!(p = memchr(s, ' ', n)))
        return malformed(rec, "a record without a count");
    p++;
    /* count */
    const char *sp = memchr(p, ' ', (size_t)(end - p));
    if (!count(p, (size_t)((sp ? sp : end) - p), &rec->count))
        return malformed(rec, "the count is not a number >= 1");
    if (!sp)
        return malformed(rec, "a record without frames");
    p = sp + 1;
    if (rec->kind == MDB_ALLOC || rec->kind == MDB_ASTACK || rec->kind == MDB_HEAP) {
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !count(p, (size_t)(sp - p), &rec->bytes))
            return malformed(rec, "the byte count is not a number >= 1");
        p = sp + 1;
    }
    if (rec->kind == MDB_WAIT) {
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !count0(p, (size_t)(sp - p), &rec->bytes))
            return malformed(rec,
                             "a wait record has its nanoseconds (a number >= 0) after the count");
        p = sp + 1;
    }
    if (rec->kind == MDB_HEAP) {
        /* the GC's number and the walk's time, then the type */
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !count(p, (size_t)(sp - p), &rec->gc))
            return malformed(rec, "a heap record has the GC's number (a number >= 1), its time "
                                  "and a type");
        p = sp + 1;
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !count0(p, (size_t)(sp - p), &rec->ms))
            return malformed(rec, "a heap record has a time (ms, a number >= 0) after the GC's "
                                  "number, then a type");
        p = sp + 1;
    }
    sp = memchr(p, ' ', (size_t)(end - p));
    if ((rec->kind == MDB_THROW || rec->kind == MDB_WAIT) &&
        !all_digits(p, (size_t)((sp ? sp : end) - p)))
        return malformed(rec, rec->kind == MDB_THROW
                                  ? "a throw record has a thread ID, a slice, a type and frames"
                                  : "a wait record has a thread ID, a slice and frames");
    if ((rec->kind == MDB_STACK || rec->kind == MDB_THROW || rec->kind == MDB_WAIT ||
         rec->kind == MDB_ASTACK) &&
        all_digits(p, (size_t)((sp ? sp : end) - p))) {
        /* format 4: the thread and the time slice (no frame is a number) */
        if (!sp || !count(p, (size_t)(sp - p), &rec->tid))
            return malformed(rec,
                             rec->kind == MDB_STACK
                                 ? "a format-4 stack record has a thread ID (a number >= 1), a "
                                   "slice and frames"
                             : rec->kind == MDB_ASTACK
                                 ? "an astack record has a thread ID (a number >= 1), a slice, "
                                   "a type and frames"
                                 : "a throw or wait record has a thread ID (a number >= 1), a "
                                   "slice and frames");
        p = sp + 1;
        sp = memchr(p, ' ', (size_t)(end - p));
        if (!sp || !count0(p, (size_t)(sp - p), &rec->slice))
            return malformed(rec, rec->kind == MDB_STACK
                                      ? "a format-4 stack record has a slice (a number >= 0) after "
                                        "its thread ID, then frames"
                                  : rec->kind == MDB_ASTACK
                                      ? "an astack record has a slice (a number >= 0) after its "
                                        "thread ID, then a type and frames"
                                      : "a throw or wait record has a slice (a number >= 0) after "
                                        "its thread ID, then frames");
        if (rec->slice >= 1ull << 32) /* 136 years of 1-ms slices: no profile's */
            return malformed(rec, "the slice is absurd (2^32 or more)");
        p = sp + 1;
        rec->threaded = true;
        sp = memchr(p, ' ', (size_t)(end - p));
    }
    if (rec->kind == MDB_CALL && all_digits(p, (size_t)((sp ? sp : end) - p))) {
        /* format 2: leaves, tail calls, unwinds */
        uint64_t *exits[3] = {&rec->leaves, &rec->tailcalls, &rec->unwinds};
        for (int i = 0; i < 3; i++) {
            sp = memchr(p, ' ', (size_t)(end - p));
            if (!sp || !count0(p, (size_t)(sp - p), exits[i]))
                return malformed(
                    rec, "a format-2 call record has three exit counts (numbers >= 0) and a frame");
            p = sp + 1;
        }
        rec->exits = true;
    }
    while (p <= end) {
        sp = mdb_find(p, end, ' ');
        k = sp ? (size_t)(sp - p) : (size_t)(end - p);
        if (k == 0)
            return malformed(rec, "an empty frame (two spaces, or a trailing space)");
        if (rec->nframes == MDB_MAX_FRAMES)
            return malformed(rec, "more than 255 frames");
        if (rec->kind == MDB_ALLOC || rec->kind == MDB_HEAP ||
            ((rec->kind == MDB_THROW || rec->kind == MDB_ASTACK) && rec->nframes == 0)) {
            /* an alloc or heap record's type; the first frame of a throw
             * (thrown from the frame after it) and of an astack record (the
             * allocated type) */
            add(rec, mdb_resolve_type(r, p, k));
        } else {
            uint32_t il;
            bool has_il;
            const mdb_frame *f = mdb_resolve_logframe(r, p, k, &il, &has_il);
            add(rec, f);
            rec->il[rec->nframes - 1] = il;
            rec->has_il[rec->nframes - 1] = has_il;
        }
        p += k + 1;
    }
    if (rec->nframes == 0)
        return malformed(rec, "a record without frames");
    if (rec->kind == MDB_THROW && rec->nframes < 2)
        return malformed(rec, "a throw record has a type and at least one frame");
    if ((rec->kind == MDB_CALL || rec->kind == MDB_ALLOC || rec->kind == MDB_HEAP) &&
        rec->nframes != 1)
        return malformed(rec, rec->kind == MDB_CALL   ? "a call record has exactly one frame"
                              : rec->kind == MDB_HEAP ? "a heap record has exactly one type"
                                                      : "an alloc record has exactly one type");
}

/* An unknown record word: lower-case letters, then a count, then more. */
static bool looks_like_record(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && s[i] >= 'a' && s[i] <= 'z')
        i++;
    if (i == 0 || i == n || s[i] != ' ')
        return false;
    size_t j = ++i;
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i > j && i < n && s[i] == ' ';
}

/* The record words and the '#' lines with a kind of their own, one table:
 * the parser, mdb_log_line and a keyword cut short all read it. */
static const struct word {
    char text[11];
    uint8_t len;
    uint8_t kind;
} records[] = {{"stack", 5, MDB_STACK},   {"call", 4, MDB_CALL},   {"alloc", 5, MDB_ALLOC},
               {"astack", 6, MDB_ASTACK}, {"throw", 5, MDB_THROW}, {"wait", 4, MDB_WAIT},
               {"heap", 4, MDB_HEAP}},
  hashes[] = {{"#mdprofile", 10, MDB_HEADER}, {"#stats", 6, MDB_STATS}, {"#module", 7, MDB_MODULE}};

/* Whether the line starts with word w, then a space, a tab or its end. */
static inline bool starts_word(const char *s, size_t n, const struct word *w)
{
    return n >= w->len && s[0] == w->text[0] && memcmp(s, w->text, w->len) == 0 &&
           (n == w->len || s[w->len] == ' ' || s[w->len] == '\t');
}

/* The kind of the table's word the line starts with, or -1. */
static int word_kind(const char *s, size_t n, const struct word *t, size_t nt)
{
    for (size_t i = 0; i < nt; i++)
        if (starts_word(s, n, &t[i]))
            return t[i].kind;
    return -1;
}

#define RECORD_KIND(s, n) word_kind(s, n, records, sizeof records / sizeof records[0])

/* Whether the line is one an mdprofile log holds, or the start of one: `#`
 * lines and records, a record keyword cut short (a proper prefix of one). */
bool mdb_log_line(const char *s, size_t n)
{
    if (n == 0 || s[0] == '#' || RECORD_KIND(s, n) >= 0 || looks_like_record(s, n))
        return true;
    for (size_t i = 0; i < sizeof records / sizeof records[0]; i++)
        if (n < records[i].len && memcmp(s, records[i].text, n) == 0)
            return true;
    return false;
}

static void parse(mdb_resolver *r, mdb_record *rec, const char *s, size_t n, uint64_t lineno,
                  int ending)
{
    uint8_t mvid[16];
    int kind;
    rec->line = s;
    rec->len = n;
    rec->lineno = lineno;
    rec->nframes = 0;
    rec->count = 1;
    rec->bytes = 0;
    rec->gc = rec->ms = 0;
    rec->exits = false;
    rec->threaded = false;
    rec->unresolved = false;
    rec->why = NULL;
    if (ending == MDB_LINE_LONG)
        return malformed(rec, "longer than 1 MiB");
    if (n == 0 && ending != MDB_LINE_SPLIT) {
        rec->kind = MDB_BLANK;
        return;
    }
    /* The profiler ends every line with a newline: a log line without one
     * is what was written before the log was cut (or the process killed),
     * and whatever it says may be partial. A plain line may end the input
     * without one (typed, or printed by printf). */
    if (ending == MDB_LINE_UNENDED && mdb_log_line(s, n))
        return malformed(rec, "cut short: the input ends inside this line (no newline)");
    if (ending == MDB_LINE_SPLIT)
        return malformed(rec, "cut short: another log's header follows inside this line (a "
                              "log cut, and the next one appended to it)");
    switch (s[0]) { /* the first byte tells most lines apart at once */
    case '#':
        kind = word_kind(s, n, hashes, sizeof hashes / sizeof hashes[0]);
        rec->kind = kind >= 0 ? kind : MDB_COMMENT;
        return;
    case 's':
    case 'c':
    case 'a':
    case 't':
    case 'w':
    case 'h':
        if ((kind = RECORD_KIND(s, n)) >= 0) {
            rec->kind = kind;
            parse_record(r, rec, s, n);
            return;
        }
        break;
    case '/':
    case '.':
        /* an absolute or relative path (the space before a token of 8
         * digits is seen without a search) */
        if ((n > 11 && s[n - 11] == ' ') || memchr(s, ' ', n)) {
            rec->kind = MDB_PLAIN;
            add(rec, mdb_resolve_plain_path(r, s, n));
            return;
        }
        break;
    }
    if (mvid_field(s, n, mvid)) {
        rec->kind = MDB_PLAIN;
        add(rec, mdb_resolve_plain_mvid(r, s, n, mvid));
    } else if (looks_like_record(s, n)) {
        malformed(rec, "unknown record kind");
    } else if (memchr(s, ' ', n)) {
        rec->kind = MDB_PLAIN;
        add(rec, mdb_resolve_plain_path(r, s, n));
    } else {
        malformed(rec, "neither a record nor MVID TOKEN nor PATH TOKEN");
    }
}

void mdb_record_parse(mdb_resolver *r, mdb_record *rec, const char *s, size_t n, uint64_t lineno,
                      int ending)
{
    mdb_resolver_set_line(r, lineno); /* native frames are named by line (native.c) */
    parse(r, rec, s, n, lineno, ending);
    unresolved(rec);
}

/* The code tombstones of the code ranges' part (ranges.c's opening
 * comment): writer-only pieces, sorted and disjoint, each with the newest
 * seq at which the code of its addresses was freed, replaced or refused,
 * so that a code_add older than that cannot bring dead code back
 * (mdt_idmap_code_add in <mdtools/idmap_code.h>). Past IDM_TOMB_MIN plus
 * one per live range, neighbouring pieces merge: an address left unknown,
 * never dead code answered. Retire drops the pieces below the watermark. */
#define _DEFAULT_SOURCE /* clockid_t, pthread_getcpuclockid (grace_int.h) */
#include "config.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tokens/idmap_int.h"
#include "tokens/ranges_int.h"

/* The first piece that ends after `a` (they are disjoint and sorted, so
 * their ends are sorted too). */
static size_t tomb_first(const mdt_idmap *m, uintptr_t a)
{
    size_t lo = 0, hi = m->rw->ntomb;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->rw->tomb[mid].end <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The newest seq among pieces overlapping [a, e), 0 if none. */
uint64_t idm_tomb_seq(const mdt_idmap *m, uintptr_t a, uintptr_t e)
{
    uint64_t s = 0;
    for (size_t i = tomb_first(m, a); i < m->rw->ntomb && m->rw->tomb[i].start < e; i++)
        if (m->rw->tomb[i].seq > s)
            s = m->rw->tomb[i].seq;
    return s;
}

static size_t tomb_limit(const mdt_idmap *m)
{
    return IDM_TOMB_MIN + m->rw->nranges;
}

/* Halve the number of pieces: each pair of neighbours becomes one piece
 * over both and the gap between them, with the newer seq. The gap then
 * refuses code_adds older than that seq which it did not have to: an
 * address left unknown (lazy catch-up can fill it), never dead code
 * answered, because a refused code_add still drops the older ranges it
 * overlaps (mdt_idmap_code_add). */
static void tomb_coarsen(mdt_idmap *m)
{
    struct idm_rwriter *w = m->rw;
    size_t k = 0;
    for (size_t i = 0; i < w->ntomb; i += 2, k++) {
        struct idm_rtomb t = w->tomb[i];
        if (i + 1 < w->ntomb) {
            t.end = w->tomb[i + 1].end;
            if (w->tomb[i + 1].seq > t.seq)
                t.seq = w->tomb[i + 1].seq;
        }
        w->tomb[k] = t;
    }
    w->ntomb = k;
    w->coarsened++;
}

/* Room for n pieces; false when there is none (the caller coarsens). */
static bool tomb_room(mdt_idmap *m, size_t n)
{
    struct idm_rwriter *w = m->rw;
    if (n <= w->captomb)
        return true;
    size_t ncap = w->captomb * 2 > n ? w->captomb * 2 : n;
    struct idm_rtomb *t = realloc(w->tomb, ncap * sizeof *t);
    if (!t)
        return false;
    w->tomb = t;
    w->captomb = ncap;
    return true;
}

/* Refuse code_adds at or below seq over [a, e) from now on: every address
 * there gets the newer of its seq and this one. Never fails: without
 * memory for more pieces, neighbours merge until there is room (the
 * preallocated IDM_TOMB_CAP0 always is, for a few), and past the bound
 * (tomb_limit) likewise. */
void idm_tomb_raise(mdt_idmap *m, uintptr_t a, uintptr_t e, uint64_t seq)
{
    struct idm_rwriter *w = m->rw;
    struct idm_rtomb small[32], *out;
    size_t i, j, no;
    for (;;) {
        i = tomb_first(m, a);
        for (j = i; j < w->ntomb && w->tomb[j].start < e; j++)
            ;
        /* [i, j) overlap [a, e); they become at most 2 (j - i) + 3 pieces. */
        size_t most = 2 * (j - i) + 3;
        out = most <= sizeof small / sizeof small[0] ? small : malloc(most * sizeof *out);
        if (out && tomb_room(m, w->ntomb - (j - i) + most))
            break;
        if (out != small)
            free(out);
        tomb_coarsen(m);
    }
    no = 0;
#define EMIT(lo, hi, sq)                                                                           \
    do {                                                                                           \
        if ((lo) < (hi)) {                                                                         \
            if (no > 0 && out[no - 1].end == (lo) && out[no - 1].seq == (sq))                      \
                out[no - 1].end = (hi);                                                            \
            else                                                                                   \
                out[no++] = (struct idm_rtomb){(lo), (hi), (sq)};                                  \
        }                                                                                          \
    } while (0)
    uintptr_t c = a;
    for (size_t x = i; x < j; x++) {
        struct idm_rtomb p = w->tomb[x];
        if (p.start < c)
            EMIT(p.start, c, p.seq); /* the first piece begins before a */
        else
            EMIT(c, p.start, seq); /* a gap before this piece */
        uintptr_t lo = p.start > a ? p.start : a, hi = p.end < e ? p.end : e;
        EMIT(lo, hi, p.seq > seq ? p.seq : seq);
        if (p.end > e)
            EMIT(e, p.end, p.seq); /* the last piece ends after e */
        c = hi;
    }
    EMIT(c, e, seq);
#undef EMIT
    memmove(&w->tomb[i + no], &w->tomb[j], (w->ntomb - j) * sizeof *out);
    memcpy(&w->tomb[i], out, no * sizeof *out);
    w->ntomb = w->ntomb - (j - i) + no;
    if (out != small)
        free(out);
    while (w->ntomb > tomb_limit(m))
        tomb_coarsen(m);
}

/* A range applied over [a, e): the pieces there are older than it (or it
 * would have been refused) and it refuses every code_add older than
 * itself, and leaves a tombstone at least as new when it goes (removed,
 * replaced, or dropped with its function), so the pieces under it say
 * nothing more: they go. Best effort: a piece that would have to split
 * in two without memory for the second half stays whole. */
void idm_tomb_clear(mdt_idmap *m, uintptr_t a, uintptr_t e)
{
    struct idm_rwriter *w = m->rw;
    size_t i = tomb_first(m, a), j = i;
    for (; j < w->ntomb && w->tomb[j].start < e; j++)
        ;
    if (i == j)
        return;
    struct idm_rtomb keep[2];
    size_t nk = 0;
    if (w->tomb[i].start < a)
        keep[nk++] = (struct idm_rtomb){w->tomb[i].start, a, w->tomb[i].seq};
    if (w->tomb[j - 1].end > e)
        keep[nk++] = (struct idm_rtomb){e, w->tomb[j - 1].end, w->tomb[j - 1].seq};
    if (nk > j - i && !tomb_room(m, w->ntomb + 1))
        return;
    memmove(&w->tomb[i + nk], &w->tomb[j], (w->ntomb - j) * sizeof keep[0]);
    memcpy(&w->tomb[i], keep, nk * sizeof keep[0]);
    w->ntomb = w->ntomb - (j - i) + nk;
}

/* Retire: pieces below the watermark go; an array much larger than what
 * is left shrinks. */
int idm_tomb_retire(mdt_idmap *m, uint64_t below)
{
    struct idm_rwriter *w = m->rw;
    size_t k = 0;
    for (size_t i = 0; i < w->ntomb; i++)
        if (w->tomb[i].seq >= below)
            w->tomb[k++] = w->tomb[i];
    w->ntomb = k;
    size_t want = k * 2 > IDM_TOMB_CAP0 ? k * 2 : IDM_TOMB_CAP0;
    if (w->captomb > 2 * want) {
        struct idm_rtomb *t = realloc(w->tomb, want * sizeof *t);
        if (t) {
            w->tomb = t;
            w->captomb = want;
        }
    }
    return 0;
}

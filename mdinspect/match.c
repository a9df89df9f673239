/* mdinspect: words matched against lists of names, as commands, table
 * names, choices, settings and completion all match them: an exact name or
 * a unique prefix, the candidates of an ambiguous prefix, and "did you
 * mean" for a word that matches none (a capped edit distance); and a
 * number as a word. Knows no command: the lists are the caller's. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <talloc.h>

#include <mdtools/tables.h>

#include "cmd.h"

static bool has_prefix(const char *name, const char *word, bool nocase)
{
    size_t n = strlen(word);
    return nocase ? strncasecmp(name, word, n) == 0 : strncmp(name, word, n) == 0;
}

long mdi_match(const char *word, const char *const *list, size_t n, bool nocase)
{
    long found = MDI_MATCH_NONE;
    size_t i;
    if (!word[0])
        return MDI_MATCH_NONE;
    for (i = 0; i < n; i++)
        if (list[i] && (nocase ? strcasecmp(list[i], word) : strcmp(list[i], word)) == 0)
            return (long)i;
    for (i = 0; i < n; i++) {
        if (!list[i] || !has_prefix(list[i], word, nocase))
            continue;
        if (found != MDI_MATCH_NONE)
            return MDI_MATCH_AMBIGUOUS;
        found = (long)i;
    }
    return found;
}

char *mdi_match_list(void *mem_ctx, const char *word, const char *const *list, size_t n,
                     bool nocase)
{
    char *s = talloc_strdup(mem_ctx, "");
    for (size_t i = 0; s && i < n; i++)
        if (list[i] && has_prefix(list[i], word, nocase))
            s = talloc_asprintf_append(s, "%s%s", s[0] ? ", " : "", list[i]);
    return s;
}

/* Edit distance with adjacent transpositions (optimal string alignment),
 * case-insensitive, capped: anything above `cap` is cap + 1. */
static size_t distance(const char *a, const char *b, size_t cap)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t d[3][64];
    if (la >= 63 || lb >= 63)
        return cap + 1;
    if ((la > lb ? la - lb : lb - la) > cap)
        return cap + 1;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3];
        cur[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
            size_t v = prev[j - 1] + (ca != cb);
            if (prev[j] + 1 < v)
                v = prev[j] + 1;
            if (cur[j - 1] + 1 < v)
                v = cur[j - 1] + 1;
            if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
                tolower((unsigned char)a[i - 2]) == cb && prev2[j - 2] + 1 < v)
                v = prev2[j - 2] + 1;
            cur[j] = v;
        }
    }
    return d[la % 3][lb] > cap ? cap + 1 : d[la % 3][lb];
}

char *mdi_did_you_mean(void *mem_ctx, const char *word, const char *const *list, size_t n)
{
    /* One edit for short words, two for longer ones: closer than that
     * is a typo, farther a different word. */
    size_t cap = strlen(word) <= 4 ? 1 : 2, best = cap + 1;
    char *s;
    for (size_t i = 0; i < n; i++) {
        size_t d = list[i] ? distance(word, list[i], cap) : cap + 1;
        if (d < best)
            best = d;
    }
    if (best > cap)
        return talloc_strdup(mem_ctx, "");
    s = talloc_strdup(mem_ctx, " (did you mean ");
    for (size_t i = 0, k = 0; s && i < n; i++)
        if (list[i] && distance(word, list[i], cap) == best)
            s = talloc_asprintf_append(s, "%s'%s'", k++ ? " or " : "", list[i]);
    return s ? talloc_strdup_append(s, "?)") : NULL;
}

bool mdi_parse_number(const char *s, uint32_t max, uint32_t *out)
{
    char *end;
    unsigned long long v;
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
        base = 16, s += 2;
    if (!isxdigit((unsigned char)s[0]))
        return false;
    errno = 0;
    v = strtoull(s, &end, base);
    if (errno || *end || v > max)
        return false;
    *out = (uint32_t)v;
    return true;
}

const char *const *mdi_table_names(void)
{
    static const char *tnames[MDT_TABLE_MAX];
    static bool done;
    if (!done) {
        for (unsigned i = 0; i < MDT_TABLE_MAX; i++) {
            const mdt_table_schema *s = mdt_table_schema_get(i);
            tnames[i] = s ? s->name : NULL;
        }
        done = true;
    }
    return tnames;
}

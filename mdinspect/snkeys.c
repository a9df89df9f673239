/* --sn-keys FILE: public keys to check strong names with, by token, for
 * class libraries signed with a key other than the one their Assembly row
 * names (Mono signs its copies of the Microsoft libraries with its own key
 * and maps their tokens to it in machine.config). A line gives a token
 * and a key in hex, either as two words ("b77a5c561934e089 0024...") or
 * as machine.config's <map Token="..." PublicKey="..." />; other lines are
 * ignored. The file is read through mdt_file_read(3): only a regular
 * file, of at most 1 MiB (a larger one is refused, not cut). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <talloc.h>

#include <mdtools/errors.h>
#include <mdtools/file.h>
#include <mdtools/strongname.h>

#include "snkeys.h"

#define SNKEYS_MAX_BYTES (1u << 20)

static int hexval(int c)
{
    return isdigit(c) ? c - '0' : isxdigit(c) ? tolower(c) - 'a' + 10 : -1;
}

/* The run of hex digits at s, as bytes under mem; NULL when it is not an
 * even number of digits of at least `min` bytes. */
static uint8_t *hex_run(void *mem, const char *s, size_t *len, size_t min)
{
    size_t n = 0;
    uint8_t *b;
    while (hexval((unsigned char)s[n]) >= 0)
        n++;
    if (n % 2 || n / 2 < min)
        return NULL;
    if (!(b = talloc_array(mem, uint8_t, n / 2)))
        return NULL;
    for (size_t i = 0; i < n / 2; i++)
        b[i] =
            (uint8_t)(hexval((unsigned char)s[2 * i]) << 4 | hexval((unsigned char)s[2 * i + 1]));
    *len = n / 2;
    return b;
}

static const char *after(const char *line, const char *key)
{
    const char *p = strstr(line, key);
    return p ? p + strlen(key) : NULL;
}

static int add_line(void *mem, mdi_snkeys *k, const char *line)
{
    const char *t = after(line, "Token=\""), *pk = after(line, "PublicKey=\"");
    uint8_t *tok, *key;
    size_t tl, kl;
    if (!t || !pk) { /* two words */
        t = line;
        while (isspace((unsigned char)*t))
            t++;
        pk = t;
        while (*pk && !isspace((unsigned char)*pk))
            pk++;
        while (isspace((unsigned char)*pk))
            pk++;
    }
    if (!(tok = hex_run(mem, t, &tl, 8)) || tl != 8 || !(key = hex_run(mem, pk, &kl, 12)))
        return 0;
    mdt_sn_key *a = talloc_realloc(mem, k->keys, mdt_sn_key, k->n + 1);
    if (!a)
        return -1;
    k->keys = a;
    memcpy(a[k->n].token, tok, 8);
    a[k->n].public_key = key;
    a[k->n].len = kl;
    k->n++;
    return 0;
}

int mdi_snkeys_load(void *mem, mdi_snkeys *k, const char *path, char **err)
{
    char *buf, msg[512];
    if (mdt_file_read(mem, &buf, NULL, path, SNKEYS_MAX_BYTES) != 0) {
        *err = talloc_strdup(mem, mdt_error_message(msg, sizeof msg));
        return -1;
    }
    for (char *line = buf, *nl; line && *line; line = nl) {
        if ((nl = strchr(line, '\n')))
            *nl++ = '\0';
        if (add_line(mem, k, line) != 0) {
            *err = talloc_strdup(mem, "out of memory");
            return -1;
        }
    }
    talloc_free(buf);
    return 0;
}

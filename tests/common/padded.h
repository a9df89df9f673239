/* A copy of a small PE fixture made large: `pad` zero bytes inserted in the
 * file before the raw data of its second section, every later section's
 * PointerToRawData (and any debug entry's file pointer past that point)
 * moved by as much. RVAs do not change, so the copy reads exactly as the
 * original; but its sections after the first lie far from its headers in
 * the file, which is what a test of reading on demand (MDT_OPEN_LAZY, a
 * file read in chunks) needs: the fixtures are all under one chunk. pad
 * must be a multiple of the file alignment (512 is). */
#ifndef MDT_TESTS_PADDED_H
#define MDT_TESTS_PADDED_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static inline uint32_t padded_le32(const uint8_t *p)
{
    return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void padded_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
    p[3] = (uint8_t)(v >> 24);
}

/* Write the padded copy of `src` to a new temporary file, its name in tmp
 * (the caller unlinks it). 0, or -1 when src is not a PE with two
 * sections or a file cannot be read or written. */
static inline int padded_copy(const char *src, char *tmp, size_t n, size_t pad)
{
    FILE *in = fopen(src, "rb");
    uint8_t *d = NULL;
    long size;
    int fd, ok = -1;
    if (!in)
        return -1;
    if (fseek(in, 0, SEEK_END) != 0 || (size = ftell(in)) < 512 || fseek(in, 0, SEEK_SET) != 0 ||
        !(d = malloc((size_t)size)) || fread(d, 1, (size_t)size, in) != (size_t)size)
        goto out;
    uint32_t lfanew = padded_le32(d + 60);
    if (lfanew > (uint32_t)size - 248)
        goto out;
    unsigned nsec = d[lfanew + 6] | d[lfanew + 7] << 8;
    unsigned opt = d[lfanew + 20] | d[lfanew + 21] << 8;
    uint8_t *sec = d + lfanew + 24 + opt;
    if (nsec < 2 || sec + nsec * 40 > d + size)
        goto out;
    uint32_t at = padded_le32(sec + 40 + 20); /* the second section's raw data */
    if (at > (uint32_t)size)
        goto out;
    /* Debug entries (data directory 6) whose data lies past `at`. */
    unsigned dirs = padded_le32(d + lfanew + 24) == 0x20b ? 112 : 96;
    uint32_t drva = padded_le32(d + lfanew + 24 + dirs + 6 * 8);
    uint32_t dsize = padded_le32(d + lfanew + 24 + dirs + 6 * 8 + 4);
    for (unsigned i = 0; drva && i < nsec; i++) {
        uint32_t va = padded_le32(sec + i * 40 + 12), raw = padded_le32(sec + i * 40 + 20);
        uint32_t rsz = padded_le32(sec + i * 40 + 16);
        if (drva < va || drva - va >= rsz)
            continue;
        uint32_t off = raw + (drva - va);
        for (uint32_t k = 0; k + 28 <= dsize && off + k + 28 <= (uint32_t)size; k += 28) {
            uint32_t fp = padded_le32(d + off + k + 24);
            if (fp >= at)
                padded_put32(d + off + k + 24, fp + (uint32_t)pad);
        }
    }
    for (unsigned i = 1; i < nsec; i++) {
        uint32_t raw = padded_le32(sec + i * 40 + 20);
        if (raw >= at)
            padded_put32(sec + i * 40 + 20, raw + (uint32_t)pad);
    }
    snprintf(tmp, n, "%s/mdt-padded-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if ((fd = mkstemp(tmp)) < 0)
        goto out;
    uint8_t *zeros = calloc(1, pad ? pad : 1);
    ok = zeros && write(fd, d, at) == (ssize_t)at && write(fd, zeros, pad) == (ssize_t)pad &&
                 write(fd, d + at, (size_t)size - at) == (ssize_t)((size_t)size - at)
             ? 0
             : -1;
    free(zeros);
    if (close(fd) != 0)
        ok = -1;
    if (ok)
        unlink(tmp);
out:
    free(d);
    fclose(in);
    return ok;
}

#endif

/* A flat PE file laid out as a loader does it, with holes (see layout.h).
 * The PE/COFF facts used: e_lfanew at 0x3c; the COFF header after "PE\0\0"
 * (NumberOfSections at +2, SizeOfOptionalHeader at +16); in the optional
 * header SizeOfImage at +56 and SizeOfHeaders at +60 (PE32 and PE32+); the
 * 40-byte section headers after it (VirtualSize +8, VirtualAddress +12,
 * SizeOfRawData +16, PointerToRawData +20). Like CoreCLR's loader, the
 * headers get one page; a section gets the pages from its RVA to RVA +
 * VirtualSize (SizeOfRawData when VirtualSize is 0), its raw data copied
 * in (at most VirtualSize bytes, as the Windows loader does), zeros after. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "layout.h"

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)(p[0] | p[1] << 8);
}

static size_t round_up(size_t v, size_t page)
{
    return (v + page - 1) / page * page;
}

/* Make [lo, hi) of the image readable (and writable until layout_make
 * ends) and note it, merged with the range before when they touch. */
static int expose(loader_layout *l, size_t lo, size_t hi)
{
    if (mprotect((void *)(l->base + lo), hi - lo, PROT_READ | PROT_WRITE) != 0)
        return -1;
    mdt_mem_range *last = l->nranges ? &l->ranges[l->nranges - 1] : NULL;
    const uint8_t *start = l->base + lo;
    if (last && start <= (const uint8_t *)last->start + last->len) {
        size_t end = hi > (size_t)((const uint8_t *)last->start - l->base) + last->len
                         ? hi - (size_t)((const uint8_t *)last->start - l->base)
                         : last->len;
        last->len = end;
    } else {
        l->ranges[l->nranges++] = (mdt_mem_range){start, hi - lo};
    }
    return 0;
}

int layout_make(loader_layout *l, const uint8_t *file, size_t len)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    memset(l, 0, sizeof *l);
    if (len < 64 || file[0] != 'M' || file[1] != 'Z')
        return -1;
    size_t pe = get32(file + 0x3c);
    if (pe > len || len - pe < 4 + 20 + 64 || memcmp(file + pe, "PE\0\0", 4) != 0)
        return -1;
    const uint8_t *coff = file + pe + 4, *opt = coff + 20;
    unsigned nsec = get16(coff + 2);
    size_t sec_at = pe + 4 + 20 + get16(coff + 16);
    size_t size_of_image = get32(opt + 56), size_of_headers = get32(opt + 60);
    if (size_of_image == 0)
        return -1;
    if (nsec > LAYOUT_MAX_SECTIONS)
        nsec = LAYOUT_MAX_SECTIONS;
    if (sec_at > len)
        nsec = 0;
    else if ((len - sec_at) / 40 < nsec)
        nsec = (unsigned)((len - sec_at) / 40);

    l->image_len =
        round_up(size_of_image < LAYOUT_MAX_IMAGE ? size_of_image : LAYOUT_MAX_IMAGE, page);
    l->map_len = l->image_len + 2 * page;
    l->map = mmap(NULL, l->map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (l->map == MAP_FAILED) {
        l->map = NULL;
        return -1;
    }
    l->base = l->map + page;
    uint8_t *base = l->map + page;

    /* The header page. */
    if (expose(l, 0, page) != 0)
        goto fail;
    memcpy(base, file, len < page ? len : page);
    size_t prev_end = size_of_headers < page ? size_of_headers : page;

    for (unsigned i = 0; i < nsec; i++) {
        const uint8_t *h = file + sec_at + (size_t)i * 40;
        size_t vsize = get32(h + 8), va = get32(h + 12), raw = get32(h + 16), ptr = get32(h + 20);
        size_t span = vsize ? vsize : raw;
        if (span == 0 || va < prev_end || va > l->image_len || span > l->image_len - va) {
            l->skipped++;
            continue;
        }
        if (expose(l, va / page * page, round_up(va + span, page)) != 0)
            goto fail;
        size_t n = raw < span ? raw : span;
        if (ptr < len)
            memcpy(base + va, file + ptr, n < len - ptr ? n : len - ptr);
        prev_end = va + span;
        l->sections++;
    }
    for (size_t i = 0; i < l->nranges; i++)
        if (mprotect((void *)l->ranges[i].start, l->ranges[i].len, PROT_READ) != 0)
            goto fail;
    return 0;
fail:
    perror("layout_make");
    layout_free(l);
    return -1;
}

void layout_free(loader_layout *l)
{
    if (l->map)
        munmap(l->map, l->map_len);
    memset(l, 0, sizeof *l);
}

uint8_t *layout_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    uint8_t *buf = NULL;
    long n;
    if (!f)
        return NULL;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0) {
        /* Exactly n bytes (1 for an empty file): reading past them is a bug
         * a sanitizer reports. */
        buf = malloc(n ? (size_t)n : 1);
        if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
            free(buf);
            buf = NULL;
        }
        *len = (size_t)n;
    }
    fclose(f);
    return buf;
}

/* mdinspect batch: the symbols of one ELF file, to name the offsets of
 * native frames (native.c). elfutils reads the file: libelf its sections
 * and symbol tables (gelf_getsym checks every index against the section's
 * data), libdwelf its GNU build-id. What is kept is a table of the
 * function symbols sorted by address, from .symtab when the file has one,
 * else from .dynsym: elfutils' own address lookup (dwfl_module_addrsym)
 * walks the whole table for every address, and a profile asks for tens of
 * thousands of them.
 *
 * The file is untrusted: only a regular file is read (opened O_NONBLOCK,
 * then fstat), at most MAX_FILE bytes of it, at most MAX_SYMS symbols and
 * MAX_NAME bytes of each name; libelf reads the sections it is asked for
 * and nothing else (ELF_C_READ: no mapping a truncated file could turn
 * into SIGBUS). Anything libelf refuses leaves the file unnamed, with a
 * message. */
#define _DEFAULT_SOURCE /* strnlen */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <talloc.h>
#include <unistd.h>

#include "batch/native.h"

#define MAX_FILE (4ull << 30) /* bytes of a file we agree to read */
#define MAX_SYMS (1u << 23)   /* symbols kept from one table */
#define MAX_NAME 4096u        /* bytes of one symbol's name */
#define MAX_BUILDID 64u       /* bytes of a build-id */

struct sym {
    uint64_t addr, size;
    const char *name;
    unsigned rank; /* at one address: 0 global, 1 weak, 2 local (then the longest name) */
};

struct mdb_elfsyms {
    char build_id[2 * MAX_BUILDID + 1];
    bool symtab; /* the table is .symtab (else .dynsym, or none) */
    struct sym *syms;
    size_t n;
};

static pthread_once_t once = PTHREAD_ONCE_INIT;
static bool version_ok;

static void init_libelf(void)
{
    version_ok = elf_version(EV_CURRENT) != EV_NONE;
}

static int by_addr(const void *a, const void *b)
{
    const struct sym *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    /* aliases: the longest name first, as perf chooses (glibc's
     * __memmove_avx_unaligned_erms over its alias __memcpy_...) */
    size_t lx = strlen(x->name), ly = strlen(y->name);
    if (lx != ly)
        return lx > ly ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* Whether section index `ndx` holds code. */
static bool exec_section(Elf *e, size_t ndx)
{
    GElf_Shdr sh;
    Elf_Scn *scn = elf_getscn(e, ndx);
    return scn && gelf_getshdr(scn, &sh) && (sh.sh_flags & SHF_EXECINSTR);
}

/* The function symbols of one symbol table section. */
static int read_table(mdb_elfsyms *s, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
    Elf_Data *d = elf_getdata(scn, NULL);
    size_t entsize = gelf_fsize(e, ELF_T_SYM, 1, EV_CURRENT);
    if (!d || !entsize)
        return -1;
    size_t total = d->d_size / entsize, n = 0;
    if (total > MAX_SYMS)
        total = MAX_SYMS;
    s->syms = talloc_array(s, struct sym, total ? total : 1);
    if (!s->syms)
        return -1;
    for (size_t i = 1; i < total; i++) {
        GElf_Sym sym;
        if (!gelf_getsym(d, (int)i, &sym))
            break;
        unsigned type = GELF_ST_TYPE(sym.st_info), bind = GELF_ST_BIND(sym.st_info);
        if (sym.st_shndx == SHN_UNDEF || !sym.st_size || !sym.st_value)
            continue;
        if (type != STT_FUNC && type != STT_GNU_IFUNC &&
            !(type == STT_NOTYPE && sym.st_shndx < SHN_LORESERVE && exec_section(e, sym.st_shndx)))
            continue;
        const char *name = elf_strptr(e, sh->sh_link, sym.st_name);
        if (!name || !name[0])
            continue;
        size_t len = strnlen(name, MAX_NAME);
        char *copy = talloc_strndup(s, name, len);
        if (!copy)
            return -1;
        s->syms[n++] = (struct sym){sym.st_value, sym.st_size, copy,
                                    bind == STB_GLOBAL ? 0
                                    : bind == STB_WEAK ? 1
                                                       : 2};
    }
    s->n = n;
    qsort(s->syms, n, sizeof *s->syms, by_addr);
    return 0;
}

int mdb_elfsyms_open(void *ctx, mdb_elfsyms **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    pthread_once(&once, init_libelf);
    if (!version_ok) {
        snprintf(err, errlen, "libelf refuses this ELF version");
        return -1;
    }
    struct stat st;
    int fd = mdb_open_regular(path, &st, err, errlen); /* files.c: no FIFO, device or folder */
    if (fd < 0)
        return -1;
    if ((uint64_t)st.st_size > MAX_FILE) {
        snprintf(err, errlen, "too large");
        close(fd);
        return -1;
    }
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    mdb_elfsyms *s = talloc_zero(ctx, mdb_elfsyms);
    int r = -1;
    if (!s || !e || elf_kind(e) != ELF_K_ELF) {
        snprintf(err, errlen, "%s", !s ? "out of memory" : "not an ELF file");
        goto done;
    }
    const void *id;
    ssize_t idlen = dwelf_elf_gnu_build_id(e, &id);
    if (idlen > 0 && (size_t)idlen <= MAX_BUILDID)
        for (ssize_t i = 0; i < idlen; i++)
            snprintf(s->build_id + 2 * i, 3, "%02x", ((const unsigned char *)id)[i]);
    Elf_Scn *symtab = NULL, *dynsym = NULL;
    GElf_Shdr symsh, dynsh;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh))
            continue;
        if (sh.sh_type == SHT_SYMTAB && !symtab) {
            symtab = scn;
            symsh = sh;
        } else if (sh.sh_type == SHT_DYNSYM && !dynsym) {
            dynsym = scn;
            dynsh = sh;
        }
    }
    s->symtab = symtab != NULL;
    if ((symtab && read_table(s, e, symtab, &symsh) != 0) ||
        (!symtab && dynsym && read_table(s, e, dynsym, &dynsh) != 0)) {
        snprintf(err, errlen, "its symbol table does not read: %s", elf_errmsg(-1));
        goto done;
    }
    r = 0;
done:
    if (e)
        elf_end(e);
    close(fd);
    if (r == 0)
        *out = s;
    else
        talloc_free(s);
    return r;
}

const char *mdb_elfsyms_build_id(const mdb_elfsyms *s)
{
    return s->build_id;
}

bool mdb_elfsyms_has_symtab(const mdb_elfsyms *s)
{
    return s->symtab;
}

const char *mdb_elfsyms_lookup(const mdb_elfsyms *s, uint64_t addr)
{
    /* the last symbol starting at or before addr, then a few before it
     * (a symbol may lie inside a larger one) */
    size_t lo = 0, hi = s->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->syms[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo, k = 0; i-- > 0 && k < 16; k++) {
        const struct sym *y = &s->syms[i];
        if (addr - y->addr < y->size) {
            /* the first of this address (qsort put the global one first) */
            while (i && s->syms[i - 1].addr == y->addr &&
                   addr - s->syms[i - 1].addr < s->syms[i - 1].size)
                y = &s->syms[--i];
            return y->name;
        }
    }
    return NULL;
}

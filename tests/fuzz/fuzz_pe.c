/* libFuzzer harness over what a PE file says besides its metadata
 * (<mdtools/pe.h>) and over strong-name verification
 * (<mdtools/strongname.h>): the DOS, COFF and optional headers, every
 * section header, the checksum, the data of every debug directory entry
 * through each typed decoder (CodeView, embedded PDB, PDB checksum, perf
 * map), the ReadyToRun header and its sections, the IL-to-native maps of
 * ReadyToRun code (DebugInfo), the Win32 resource tree and
 * the VS_VERSIONINFO resource, and mdt_strongname_verify(), which parses the
 * assembly's public key blob, hashes the file and runs the RSA step. To
 * reach the key blob parser and the RSA step with blobs mutation makes,
 * the verification runs again with keys given for the assembly's token:
 * its own key cut short and with a byte changed, and the input's last
 * bytes taken as a key blob. Then every manifest resource
 * (<mdtools/resources.h>) is read, and each embedded one in the
 * System.Resources format parsed; an input that is itself such a
 * resource set (it starts with 0xBEEFCACE) is parsed as one. The input is
 * opened as a file, as a loader-mapped copy and laid out as a loader lays
 * it out with the gaps unreadable (tests/common/layout.c), and, padded
 * with zeros past 256 KiB, written to a temporary file and opened with
 * MDT_OPEN_LAZY (read on demand: the headers, then chunks as the calls
 * need them), which must open or fail as the same bytes opened from
 * memory do.
 *
 * Oracles besides the sanitizers: a verification gives the same outcome
 * twice; "verified" means the file's hash is the one the signature
 * carries; every status and reason has words; a decoder of one debug
 * entry type refuses an entry of another type (MDT_EINVAL); version
 * strings and resource names are non-NULL UTF-8 strings; nothing stays
 * under the caller's context once the image is closed; the version
 * resource and the resource list take memory bounded by the input; a
 * parsed resource set's values lie inside its data, its entries have
 * names and types, and it takes memory bounded by its size.
 * Built for libFuzzer with --enable-fuzzing, and always as a plain
 * replayer (replay.c) that `make check` runs over tests/fuzz/corpus/pe/. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <talloc.h>
#include <unistd.h>

#include <mdtools/mdtools.h>
#include <mdtools/pe.h>
#include <mdtools/resources.h>
#include <mdtools/strongname.h>

#include "layout.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint64_t sink;

static void touch_error(void)
{
    char msg[512];
    sink += strlen(mdt_error_message(msg, sizeof msg));
    mdt_error_clear();
}

static void touch_headers(const mdt_image *img)
{
    mdt_pe_headers h;
    mdt_pe_section s;
    uint32_t sum;
    if (mdt_pe_headers_read(&h, img) == 0) {
        sink += h.machine + h.magic + h.ndirs + h.checksum_offset + h.cert_dir_offset;
        if (h.ndirs > 16)
            abort();
        for (uint32_t i = 0; i < h.ndirs; i++)
            sink += h.dirs[i].rva + h.dirs[i].size;
    } else {
        touch_error();
    }
    /* Every section and the one past the last (refused). */
    for (size_t i = 0; i < 200; i++) {
        if (mdt_pe_section_read(&s, img, i) != 0) {
            touch_error();
            break;
        }
        if (s.name[8] != 0)
            abort();
        sink += strlen(s.name) + s.virtual_address + s.raw_size + s.characteristics;
    }
    if (mdt_pe_checksum(&sum, img) == 0)
        sink += sum;
    else
        touch_error();
}

static void touch_debug(const mdt_image *img)
{
    const mdt_pe_info *pe = mdt_image_pe_info(img);
    for (size_t i = 0; i <= pe->ndebug; i++) {
        const mdt_debug_entry *d = mdt_image_debug_entry(img, i);
        const uint8_t *p, *sum;
        const char *alg, *path;
        uint8_t sig[16];
        uint32_t u, c, version;
        size_t len;
        int e;
        if (mdt_debug_entry_data(&p, &len, img, i) == 0) {
            /* The data is readable to its end. */
            for (size_t k = 0; k < len; k += 64)
                sink += p[k];
            if (len)
                sink += p[len - 1];
        } else {
            touch_error();
        }
        /* Each decoder on every entry: one of another type is refused. */
        e = mdt_debug_embedded_pdb(&u, &c, img, i);
        if (e == 0)
            sink += u + c;
        else {
            if (d && d->type != 17 && e != MDT_EINVAL)
                abort();
            touch_error();
        }
        e = mdt_debug_pdb_checksum(&alg, &sum, &len, img, i);
        if (e == 0) {
            sink += strlen(alg) + len;
            if (len)
                sink += sum[0] + sum[len - 1];
        } else {
            if (d && d->type != 19 && e != MDT_EINVAL)
                abort();
            touch_error();
        }
        e = mdt_debug_perfmap(sig, &version, &path, img, i);
        if (e == 0)
            sink += sig[0] + version + strlen(path);
        else {
            if (d && d->type != 21 && e != MDT_EINVAL)
                abort();
            touch_error();
        }
    }
}

static void touch_r2r(const mdt_image *img)
{
    mdt_r2r_header h;
    mdt_r2r_section s;
    if (mdt_r2r_header_read(&h, img) != 0) {
        touch_error();
        return;
    }
    sink += h.major + h.minor + h.flags;
    uint32_t n = h.nsections < 4096 ? h.nsections : 4096;
    for (uint32_t i = 0; i <= n; i++) {
        if (mdt_r2r_section_read(&s, img, i) != 0) {
            if (i < h.nsections && i < n) {
                touch_error();
                continue;
            }
            touch_error();
            break;
        }
        const char *name = mdt_r2r_section_name(s.type);
        sink += s.type + s.rva + s.size + (name ? strlen(name) : 0);
    }
}

/* The IL-to-native maps of the first and last runtime functions, raw and
 * as the runtime gives them. Oracles: a count within the cap; the
 * runtime's form no longer than the raw list, without call instructions,
 * at most one entry running to the code's end; a function found by its
 * first byte is the one asked about, or an earlier one beginning there. */
static void touch_r2r_debug(const mdt_image *img)
{
    static mdt_r2r_bound raw[512], rt[512];
    mdt_r2r_debug *d;
    void *tmp = talloc_new(NULL);
    if (!tmp || mdt_r2r_debug_open(&d, tmp, img) != 0) {
        touch_error();
        talloc_free(tmp);
        return;
    }
    uint32_t nf = mdt_r2r_debug_functions(d);
    for (uint32_t k = 0; k < nf && k < 64; k++) {
        uint32_t i = k < 32 ? k : nf - 1 - (k - 32);
        size_t nraw = 0, nrt = 0;
        int e = mdt_r2r_bounds(raw, 512, &nraw, d, i, 0);
        if (e) {
            touch_error();
            continue;
        }
        if (nraw > MDT_R2R_BOUNDS_MAX)
            abort();
        if (nraw > 512)
            continue;
        if (mdt_r2r_bounds(rt, 512, &nrt, d, i, MDT_R2R_BOUNDS_RUNTIME) != 0 || nrt > nraw)
            abort();
        unsigned open_end = 0;
        for (size_t j = 0; j < nrt; j++) {
            if (rt[j].source & MDT_R2R_SOURCE_CALL_INSTRUCTION)
                abort();
            open_end += (rt[j].source & MDT_R2R_SOURCE_END_UNKNOWN) != 0;
            sink += rt[j].il + rt[j].native_start + rt[j].native_end;
        }
        if (open_end > 1)
            abort();
        uint32_t at = 0;
        if (mdt_r2r_function_at(&at, d, raw[0].native_start) == 0)
            sink += at;
        else
            touch_error();
    }
    talloc_free(tmp);
}

/* The entry points by runtime function (mdt_r2r_methods_*). Oracles: an
 * entry's runtime functions lie inside the count and in code order, each
 * maps back to its entry (a MethodDef's) or to nothing (generic code), and
 * its first byte's RVA to the same. */
static void touch_r2r_methods(const mdt_image *img)
{
    mdt_r2r_methods *m;
    void *tmp = talloc_new(NULL);
    if (!tmp || mdt_r2r_methods_open(&m, tmp, img) != 0) {
        touch_error();
        talloc_free(tmp);
        return;
    }
    uint32_t n = mdt_r2r_methods_entries(m), last = 0;
    sink += mdt_r2r_methods_instances(m);
    for (uint32_t k = 0; k < n && k < 64; k++) {
        uint32_t i = k < 32 ? k : n - 1 - (k - 32);
        mdt_r2r_method e, x;
        if (mdt_r2r_method_get(&e, m, i) != 0) {
            touch_error();
            continue;
        }
        if (!e.count || (k && k < 32 && e.first < last))
            abort();
        last = e.first;
        for (uint32_t j = 0; j < e.count && j < 4; j++) {
            int r = mdt_r2r_method_at_index(&x, m, e.first + j);
            if ((r == 0) != (e.token != 0) ||
                (r == 0 && (x.token != e.token || x.first != e.first)))
                abort();
            if (r)
                touch_error();
        }
        if (mdt_r2r_method_at_rva(&x, m, e.rva) == 0)
            sink += x.token + x.count;
        else
            touch_error();
    }
    talloc_free(tmp);
}

static void touch_win32res(void *ctx, const mdt_image *img, size_t input_size)
{
    void *tmp = talloc_new(ctx);
    mdt_win32res *r;
    mdt_version_info *v;
    size_t n;
    if (mdt_win32res_list(tmp, &r, &n, img) == 0) {
        if (n > MDT_WIN32RES_MAX || (n && !r) || (!n && r))
            abort();
        for (size_t i = 0; i < n; i++) {
            sink += r[i].type_id + r[i].name_id + r[i].language + r[i].size;
            if (r[i].type_name)
                sink += strlen(r[i].type_name);
            if (r[i].name)
                sink += strlen(r[i].name);
        }
    } else {
        touch_error();
    }
    if (mdt_version_info_read(tmp, &v, img) == 0) {
        sink += v->file_version[0] + v->product_version[3] + v->file_flags;
        for (size_t i = 0; i < v->nstrings; i++) {
            if (!v->strings[i].table || !v->strings[i].key || !v->strings[i].value)
                abort();
            sink += strlen(v->strings[i].table) + strlen(v->strings[i].key) +
                    strlen(v->strings[i].value);
        }
        for (size_t i = 0; i < v->ntranslations; i++)
            sink += v->translations[i];
    } else {
        touch_error();
    }
    /* Names and strings come from the input, a few bytes of UTF-16 each:
     * what they take is bounded by it (with a fixed cost per leaf). */
    if (talloc_total_size(tmp) > 64 * 1024 + 8 * input_size + MDT_WIN32RES_MAX * 256)
        abort();
    talloc_free(tmp);
}

static int verify(mdt_strongname *out, const mdt_image *img, const mdt_sn_key *keys, size_t n)
{
    int e = mdt_strongname_verify(out, img, keys, n);
    if (e) {
        touch_error();
        return e;
    }
    if (!mdt_strongname_status_name(out->status))
        abort();
    if (out->status == MDT_SN_VERIFIED) {
        if (!out->hash_len || out->hash_len != out->signed_hash_len ||
            memcmp(out->hash, out->signed_hash, out->hash_len) != 0)
            abort();
    } else if (!out->reason) {
        abort();
    }
    if (out->hash_len > sizeof out->hash || out->signed_hash_len > sizeof out->signed_hash)
        abort();
    return 0;
}

static void touch_strongname(void *ctx, const mdt_image *img, const uint8_t *data, size_t size)
{
    mdt_strongname a, b;
    mdt_identity id;
    int e = verify(&a, img, NULL, 0);
    /* Deterministic: the same image gives the same outcome. */
    if (verify(&b, img, NULL, 0) != e)
        abort();
    if (!e && (a.status != b.status || a.hash_len != b.hash_len ||
               memcmp(a.hash, b.hash, a.hash_len) != 0))
        abort();
    sink += e ? 0 : (uint64_t)a.status + a.key_bits + a.hash_alg;

    /* Keys given for the assembly's token: the caller's key list is
     * tried when the own key does not verify. */
    if (mdt_assembly_identity(&id, img) != 0) {
        touch_error();
        return;
    }
    if (!id.public_key || !id.public_key_len)
        return;
    mdt_sn_key keys[4];
    uint8_t token[8];
    size_t nk = 0;
    if (mdt_assembly_public_key_token(token, id.public_key, id.public_key_len) != 0) {
        touch_error();
        return;
    }
    uint8_t *changed = talloc_memdup(ctx, id.public_key, id.public_key_len);
    if (!changed)
        abort();
    changed[(size + id.public_key_len / 2) % id.public_key_len] ^= 0x5a;
    keys[nk++] = (mdt_sn_key){.public_key = changed, .len = id.public_key_len};
    keys[nk++] = (mdt_sn_key){.public_key = id.public_key, .len = id.public_key_len / 2};
    keys[nk++] = (mdt_sn_key){.public_key = id.public_key, .len = id.public_key_len - 1};
    /* The input's tail as a key blob (a 1024-bit key is 160 bytes). */
    size_t tail = size < 160 + 12 ? size : 160 + 12;
    keys[nk++] = (mdt_sn_key){.public_key = data + size - tail, .len = tail};
    for (size_t i = 0; i < nk; i++)
        memcpy(keys[i].token, token, 8);
    if (verify(&a, img, keys, nk) == 0)
        sink += a.status + a.key_given;
    talloc_free(changed);
}

/* A System.Resources resource set: parse, check, free. */
static void parse_set(void *ctx, const uint8_t *data, size_t len)
{
    void *tmp = talloc_new(ctx);
    mdt_resource_set *set;
    if (mdt_resources_parse(tmp, &set, data, len, "fuzz.resources") == 0) {
        if (set->version != 1 && set->version != 2)
            abort();
        for (size_t i = 0; i < set->ntypes; i++)
            sink += strlen(set->types[i]);
        for (size_t i = 0; i < set->n; i++) {
            const mdt_resource_entry *e = &set->entries[i];
            if (!e->name || !e->type || e->offset > len || e->size > len - e->offset)
                abort();
            sink += strlen(e->name) + strlen(e->type) + e->type_code;
            if (e->string)
                sink += strlen(e->string);
            if (e->type_code < MDT_RESTYPE_USER && set->version == 2 &&
                !mdt_resources_type_name(e->type_code))
                abort();
        }
        /* Names and strings are copied, but entries sharing them cannot
         * make the copies grow past a multiple of the data. */
        if (talloc_total_size(tmp) > 128 * 1024 + 4 * len + set->n * sizeof *set->entries +
                                         set->ntypes * sizeof(char *) + 8 * set->n)
            abort();
    } else {
        touch_error();
    }
    talloc_free(tmp);
}

static void touch_resources(void *ctx, const mdt_image *img)
{
    uint32_t n = mdt_table_rows(img, MDT_TABLE_ManifestResource);
    /* The row past the last (refused) too. */
    for (uint32_t rid = 1; rid <= n + 1 && rid <= 256; rid++) {
        mdt_manifest_resource r;
        const uint8_t *data;
        size_t len;
        if (mdt_manifest_resource_read(&r, img, rid) != 0) {
            touch_error();
            continue;
        }
        sink += strlen(r.name) + r.flags + r.offset + r.where;
        if (r.where != MDT_RESOURCE_EMBEDDED) {
            if (!r.implementation_name || r.size)
                abort();
            sink += strlen(r.implementation_name);
            if (mdt_manifest_resource_data(&data, &len, img, rid) != MDT_EINVAL)
                abort();
            touch_error();
            continue;
        }
        if (mdt_manifest_resource_data(&data, &len, img, rid) != 0) {
            touch_error();
            continue;
        }
        if (len != r.size)
            abort();
        if (len)
            sink += data[0] + data[len - 1];
        if (mdt_resources_is(data, len))
            parse_set(ctx, data, len);
    }
}

/* The input padded past the size MDT_OPEN_LAZY reads whole (256 KiB), in
 * a temporary file: *path, and the padded bytes in *padded (malloc'ed). */
#define LAZY_SIZE (256 * 1024 + 1)

static int write_padded(char *path, size_t n, uint8_t **padded, const uint8_t *data, size_t size)
{
    size_t len = size > LAZY_SIZE ? size : LAZY_SIZE;
    int fd;
    snprintf(path, n, "%s/mdt-fuzz-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!(*padded = calloc(1, len)))
        return -1;
    memcpy(*padded, data, size);
    if ((fd = mkstemp(path)) < 0 || write(fd, *padded, len) != (ssize_t)len) {
        if (fd >= 0) {
            close(fd);
            unlink(path);
        }
        free(*padded);
        return -1;
    }
    close(fd);
    return 0;
}

static void open_one(void *ctx, const uint8_t *data, size_t size, int how)
{
    mdt_image *img = NULL;
    loader_layout l = {0};
    char path[1024];
    uint8_t *padded = NULL;
    int e;
    switch (how) {
    case 0: e = mdt_image_open_buffer(ctx, &img, "fuzz", data, size, 0); break;
    case 1: e = mdt_image_open_mapped(ctx, &img, "fuzz.mapped", data, size, MDT_OPEN_COPY); break;
    default:
        if (layout_make(&l, data, size) != 0)
            return;
        e = mdt_image_open_mapped_ranges(ctx, &img, "fuzz.laid-out", l.base, l.ranges, l.nranges,
                                         0);
        break;
    case 3: {
        mdt_image *mem = NULL;
        if (write_padded(path, sizeof path, &padded, data, size) != 0)
            return;
        size = size > LAZY_SIZE ? size : LAZY_SIZE;
        data = padded;
        e = mdt_image_open_file(ctx, &img, path, MDT_OPEN_LAZY);
        int e_mem = mdt_image_open_buffer(ctx, &mem, path, padded, size, 0);
        if (e != e_mem)
            abort();
        mdt_image_close(mem);
        break;
    }
    }
    if (e) {
        if (img != NULL || e > 0)
            abort();
        touch_error();
    } else {
        touch_headers(img);
        touch_debug(img);
        touch_r2r(img);
        touch_r2r_debug(img);
        touch_r2r_methods(img);
        touch_win32res(ctx, img, size);
        touch_strongname(ctx, img, data, size);
        touch_resources(ctx, img);
        mdt_image_close(img);
    }
    layout_free(&l);
    if (padded) {
        unlink(path);
        free(padded);
    }
    if (talloc_total_blocks(ctx) != 1)
        abort();
    mdt_error_clear();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    void *ctx = talloc_new(NULL);
    if (!ctx)
        return 0;
    /* Larger inputs add nothing these parsers do not see in 128 KiB. */
    if (size <= 128 * 1024) {
        if (mdt_resources_is(data, size))
            parse_set(ctx, data, size);
        open_one(ctx, data, size, 0);
        open_one(ctx, data, size, 1);
        open_one(ctx, data, size, 2);
        open_one(ctx, data, size, 3);
    }
    talloc_free(ctx);
    return 0;
}

/* bench_sig_mono: the libmono side of the signature benchmark (bench/sig/
 * README.md). The same work as bench_sig_md through libmono 6.8's public
 * API: every MethodDef and MemberRef signature with
 * mono_metadata_parse_method_signature (mono_metadata_parse_field_type for
 * field MemberRefs), every TypeSpec with mono_type_create_from_typespec,
 * every MethodSpec's arguments with mono_metadata_parse_type, each printed
 * with mono_type_get_name (a method as `RET(params)`, its parameters from
 * mono_signature_get_desc). libmono resolves every class a signature names,
 * which needs the runtime: mono_jit_init runs first, outside the timed
 * region (reported as init_ns). Timed: bench_sig_mono_work().
 *
 * Usage: bench_sig_mono [-p] file... */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mono/jit/jit.h>
#include <mono/metadata/assembly.h>
#include <mono/metadata/class.h>
#include <mono/metadata/debug-helpers.h>
#include <mono/metadata/image.h>
#include <mono/metadata/metadata.h>
#include <mono/metadata/tokentype.h>
#include <mono/utils/mono-logger.h>

#include "sigbench.h"

static int print_names;

static void emit(uint32_t token, char *text, struct sig_counts *c)
{
    if (!text) {
        c->errors++;
        if (print_names)
            printf("%08x ERR\n", token);
        return;
    }
    c->bytes += strlen(text);
    if (print_names)
        printf("%08x %s\n", token, text);
    mono_free(text);
}

static char *type_name(MonoType *t)
{
    return t ? mono_type_get_name(t) : NULL;
}

/* RET(P1,...): mono's names of the return type and the parameters. */
static char *method_text(MonoMethodSignature *sig)
{
    if (!sig)
        return NULL;
    char *ret = type_name(mono_signature_get_return_type(sig));
    char *params = mono_signature_get_desc(sig, 1);
    char *out = NULL;
    if (ret && params) { /* mono_free() is free() (eglib's g_free) */
        size_t n = strlen(ret) + strlen(params) + 3;
        if ((out = malloc(n)))
            snprintf(out, n, "%s(%s)", ret, params);
    }
    mono_free(ret);
    mono_free(params);
    return out;
}

static const char *blob_of(MonoImage *img, uint32_t index, uint32_t *len)
{
    const char *b = mono_metadata_blob_heap(img, index);
    *len = mono_metadata_decode_blob_size(b, &b);
    return b;
}

void bench_sig_mono_work(int n, char **files, struct sig_counts *c);
__attribute__((noinline)) void bench_sig_mono_work(int n, char **files, struct sig_counts *c)
{
    for (int i = 0; i < n; i++) {
        MonoImageOpenStatus st;
        MonoAssembly *as = mono_assembly_open(files[i], &st);
        if (!as) {
            c->errors++;
            continue;
        }
        MonoImage *img = mono_assembly_get_image(as);
        c->files++;

        const MonoTableInfo *t = mono_image_get_table_info(img, MONO_TABLE_METHOD);
        int rows = mono_table_info_get_rows(t);
        for (int r = 0; r < rows; r++) {
            uint32_t cols[MONO_METHOD_SIZE], len;
            mono_metadata_decode_row(t, r, cols, MONO_METHOD_SIZE);
            const char *b = blob_of(img, cols[MONO_METHOD_SIGNATURE], &len);
            c->methoddefs++;
            emit(MONO_TOKEN_METHOD_DEF | (r + 1),
                 method_text(mono_metadata_parse_method_signature(img, r + 1, b, NULL)), c);
        }

        t = mono_image_get_table_info(img, MONO_TABLE_MEMBERREF);
        rows = mono_table_info_get_rows(t);
        for (int r = 0; r < rows; r++) {
            uint32_t cols[MONO_MEMBERREF_SIZE], len;
            mono_metadata_decode_row(t, r, cols, MONO_MEMBERREF_SIZE);
            const char *b = blob_of(img, cols[MONO_MEMBERREF_SIGNATURE], &len);
            c->memberrefs++;
            if (len && (*b & 0x0f) == 0x06) /* FieldSig */
                emit(MONO_TOKEN_MEMBER_REF | (r + 1),
                     type_name(mono_metadata_parse_field_type(img, 0, b + 1, NULL)), c);
            else
                emit(MONO_TOKEN_MEMBER_REF | (r + 1),
                     method_text(mono_metadata_parse_method_signature(img, 0, b, NULL)), c);
        }

        rows = mono_table_info_get_rows(mono_image_get_table_info(img, MONO_TABLE_TYPESPEC));
        for (int r = 0; r < rows; r++) {
            c->typespecs++;
            emit(MONO_TOKEN_TYPE_SPEC | (r + 1),
                 type_name(mono_type_create_from_typespec(img, MONO_TOKEN_TYPE_SPEC | (r + 1))), c);
        }

        t = mono_image_get_table_info(img, MONO_TABLE_METHODSPEC);
        rows = mono_table_info_get_rows(t);
        for (int r = 0; r < rows; r++) {
            uint32_t cols[MONO_METHODSPEC_SIZE], len;
            mono_metadata_decode_row(t, r, cols, MONO_METHODSPEC_SIZE);
            const char *b = blob_of(img, cols[MONO_METHODSPEC_SIGNATURE], &len);
            c->methodspecs++;
            /* 0x0A, argument count, then the types. */
            uint32_t nargs = len >= 2 ? mono_metadata_decode_value(b + 1, &b) : 0;
            char buf[4096];
            size_t o = 0;
            int ok = nargs > 0;
            buf[o++] = '<';
            for (uint32_t k = 0; k < nargs && ok; k++) {
                char *a = type_name(mono_metadata_parse_type(img, MONO_PARSE_TYPE, 0, b, &b));
                if (!a) {
                    ok = 0;
                    break;
                }
                o += (size_t)snprintf(buf + o, o < sizeof buf ? sizeof buf - o : 0, "%s%s",
                                      k ? "," : "", a);
                mono_free(a);
            }
            if (o + 2 > sizeof buf)
                o = sizeof buf - 2;
            buf[o++] = '>';
            buf[o] = '\0';
            emit(MONO_TOKEN_METHOD_SPEC | (r + 1), ok ? strdup(buf) : NULL, c);
        }
    }
}

int main(int argc, char **argv)
{
    struct sig_counts c = {0};
    int opt;
    while ((opt = getopt(argc, argv, "p")) != -1) {
        if (opt == 'p')
            print_names = 1;
        else {
            fprintf(stderr, "usage: bench_sig_mono [-p] file...\n");
            return 2;
        }
    }
    /* Failed class loads are expected for a few references; keep mono quiet. */
    mono_trace_set_level_string("error");
    uint64_t i0 = sig_now_ns(CLOCK_MONOTONIC);
    if (!mono_jit_init("bench_sig_mono")) {
        fprintf(stderr, "bench_sig_mono: mono_jit_init failed\n");
        return 1;
    }
    uint64_t w0 = sig_now_ns(CLOCK_MONOTONIC), c0 = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID);
    bench_sig_mono_work(argc - optind, argv + optind, &c);
    uint64_t w1 = sig_now_ns(CLOCK_MONOTONIC), c1 = sig_now_ns(CLOCK_PROCESS_CPUTIME_ID);
    sig_report("libmono", &c, w1 - w0, c1 - c0, w0 - i0);
    fflush(stdout);
    _exit(0); /* mono's shutdown is not part of the benchmark */
}

/* pprof_read FILE: decode a gzipped pprof profile (what `mdinspect batch
 * --pprof` writes) with protobuf-c's own decoder, check that it is a
 * well-formed profile as profile.proto defines one, and print it as one
 * JSON object for the tests to compare with batch's other outputs:
 *
 *   {"sample_type": [[TYPE, UNIT]...], "period_type": [TYPE, UNIT],
 *    "period": N, "default_sample_type": TYPE, "time_nanos": N,
 *    "duration_nanos": N, "comments": [TEXT...],
 *    "samples": [{"values": [N...], "labels": {KEY: NUM|STR...},
 *                 "frames": [{"name", "system_name", "file", "start_line", "line",
 *                             "mapping": FILE|null, "build_id": ID|null,
 *                             "address": N}...]}...]}   (frames leaf first)
 *
 * Checked (exit 1, saying what, when one fails): string_table[0] is "";
 * every string index is in the table; ids of mappings, locations and
 * functions are nonzero and unique; every location a sample names, every
 * function a line names and every mapping a location names exists; every
 * sample has one value per sample type. Exit 2 when the file does not
 * decompress or decode. The decompressed profile is read up to 1 GiB. */
#include "config.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <zlib.h>

#include "mdinspect/batch/profile.pb-c.h"

#define MAX_BYTES (1u << 30)

typedef Perftools__Profiles__Profile Profile;

static int fail(const char *what, unsigned long long a)
{
    fprintf(stderr, "pprof_read: %s (%llu)\n", what, a);
    return 1;
}

static unsigned char *read_gz(const char *path, size_t *len)
{
    gzFile f = gzopen(path, "rb");
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    int k;
    if (!f || !buf) {
        free(buf);
        if (f)
            gzclose(f);
        return NULL;
    }
    while ((k = gzread(f, buf + n, (unsigned)(cap - n))) > 0) {
        n += (size_t)k;
        if (n == cap) {
            unsigned char *b;
            if (cap >= MAX_BYTES || !(b = realloc(buf, cap * 2))) {
                k = -1;
                break;
            }
            buf = b;
            cap *= 2;
        }
    }
    gzclose(f);
    if (k < 0) {
        free(buf);
        return NULL;
    }
    *len = n;
    return buf;
}

static const Profile *prof;

static bool sidx(int64_t i)
{
    return i >= 0 && (uint64_t)i < prof->n_string_table;
}

static json_t *jstr(int64_t i)
{
    const char *s = prof->string_table[i];
    json_t *j = json_string(s);
    return j ? j : json_string("(not UTF-8)");
}

static const Perftools__Profiles__Location *loc_by_id(uint64_t id)
{
    if (id && id <= prof->n_location &&
        prof->location[id - 1]->id == id) /* ids as batch gives them */
        return prof->location[id - 1];
    for (size_t i = 0; i < prof->n_location; i++)
        if (prof->location[i]->id == id)
            return prof->location[i];
    return NULL;
}

static const Perftools__Profiles__Function *fn_by_id(uint64_t id)
{
    if (id && id <= prof->n_function &&
        prof->function[id - 1]->id == id) /* ids as batch gives them */
        return prof->function[id - 1];
    for (size_t i = 0; i < prof->n_function; i++)
        if (prof->function[i]->id == id)
            return prof->function[i];
    return NULL;
}

static const Perftools__Profiles__Mapping *map_by_id(uint64_t id)
{
    if (id && id <= prof->n_mapping &&
        prof->mapping[id - 1]->id == id) /* ids as batch gives them */
        return prof->mapping[id - 1];
    for (size_t i = 0; i < prof->n_mapping; i++)
        if (prof->mapping[i]->id == id)
            return prof->mapping[i];
    return NULL;
}

/* ids nonzero and unique (quadratic unless they are 1, 2, 3...) */
#define CHECK_IDS(arr, n, what)                                                                    \
    for (size_t i = 0, dense = 1; i < (n); i++) {                                                  \
        if (dense && (arr)[i]->id == i + 1)                                                        \
            continue;                                                                              \
        dense = 0;                                                                                 \
        if ((arr)[i]->id == 0)                                                                     \
            return fail(what " with id 0", i);                                                     \
        for (size_t j = 0; j < i; j++)                                                             \
            if ((arr)[j]->id == (arr)[i]->id)                                                      \
                return fail(what " ids repeat", (arr)[i]->id);                                     \
    }

static int check(void)
{
    if (prof->n_string_table == 0 || prof->string_table[0][0] != '\0')
        return fail("string_table[0] is not \"\"", prof->n_string_table);
    CHECK_IDS(prof->mapping, prof->n_mapping, "a mapping")
    CHECK_IDS(prof->location, prof->n_location, "a location")
    CHECK_IDS(prof->function, prof->n_function, "a function")
    for (size_t i = 0; i < prof->n_sample_type; i++)
        if (!sidx(prof->sample_type[i]->type) || !sidx(prof->sample_type[i]->unit))
            return fail("a sample type's string is not in the table", i);
    if (prof->period_type && (!sidx(prof->period_type->type) || !sidx(prof->period_type->unit)))
        return fail("period_type's string is not in the table", 0);
    if (!sidx(prof->default_sample_type) || !sidx(prof->drop_frames) || !sidx(prof->keep_frames))
        return fail("a string index of the profile is not in the table", 0);
    for (size_t i = 0; i < prof->n_comment; i++)
        if (!sidx(prof->comment[i]))
            return fail("a comment is not in the table", i);
    for (size_t i = 0; i < prof->n_mapping; i++)
        if (!sidx(prof->mapping[i]->filename) || !sidx(prof->mapping[i]->build_id))
            return fail("a mapping's string is not in the table", prof->mapping[i]->id);
    for (size_t i = 0; i < prof->n_function; i++) {
        const Perftools__Profiles__Function *f = prof->function[i];
        if (!sidx(f->name) || !sidx(f->system_name) || !sidx(f->filename))
            return fail("a function's string is not in the table", f->id);
    }
    for (size_t i = 0; i < prof->n_location; i++) {
        const Perftools__Profiles__Location *l = prof->location[i];
        if (l->mapping_id && !map_by_id(l->mapping_id))
            return fail("a location names a mapping that is not there", l->id);
        if (l->n_line == 0)
            return fail("a location without a line", l->id);
        for (size_t k = 0; k < l->n_line; k++)
            if (!fn_by_id(l->line[k]->function_id))
                return fail("a line names a function that is not there", l->id);
    }
    for (size_t i = 0; i < prof->n_sample; i++) {
        const Perftools__Profiles__Sample *s = prof->sample[i];
        if (s->n_value != prof->n_sample_type)
            return fail("a sample's values are not one per sample type", i);
        if (s->n_location_id == 0)
            return fail("a sample without locations", i);
        for (size_t k = 0; k < s->n_location_id; k++)
            if (!loc_by_id(s->location_id[k]))
                return fail("a sample names a location that is not there", i);
        for (size_t k = 0; k < s->n_label; k++) {
            const Perftools__Profiles__Label *lb = s->label[k];
            if (!sidx(lb->key) || !sidx(lb->str) || !sidx(lb->num_unit))
                return fail("a label's string is not in the table", i);
        }
    }
    return 0;
}

static json_t *pair(const Perftools__Profiles__ValueType *v)
{
    return v ? json_pack("[oo]", jstr(v->type), jstr(v->unit)) : json_null();
}

static json_t *dump(void)
{
    json_t *o = json_object(), *a = json_array(), *c = json_array(), *ss = json_array();
    for (size_t i = 0; i < prof->n_sample_type; i++)
        json_array_append_new(a, pair(prof->sample_type[i]));
    json_object_set_new(o, "sample_type", a);
    json_object_set_new(o, "period_type", pair(prof->period_type));
    json_object_set_new(o, "period", json_integer(prof->period));
    json_object_set_new(o, "default_sample_type", jstr(prof->default_sample_type));
    json_object_set_new(o, "time_nanos", json_integer(prof->time_nanos));
    json_object_set_new(o, "duration_nanos", json_integer(prof->duration_nanos));
    for (size_t i = 0; i < prof->n_comment; i++)
        json_array_append_new(c, jstr(prof->comment[i]));
    json_object_set_new(o, "comments", c);
    for (size_t i = 0; i < prof->n_sample; i++) {
        const Perftools__Profiles__Sample *s = prof->sample[i];
        json_t *js = json_object(), *v = json_array(), *lb = json_object(), *fr = json_array();
        for (size_t k = 0; k < s->n_value; k++)
            json_array_append_new(v, json_integer(s->value[k]));
        for (size_t k = 0; k < s->n_label; k++) {
            const Perftools__Profiles__Label *l = s->label[k];
            json_object_set_new(lb, prof->string_table[l->key],
                                l->str ? jstr(l->str) : json_integer(l->num));
        }
        for (size_t k = 0; k < s->n_location_id; k++) {
            const Perftools__Profiles__Location *l = loc_by_id(s->location_id[k]);
            const Perftools__Profiles__Mapping *m = l->mapping_id ? map_by_id(l->mapping_id) : NULL;
            /* inlined functions first, the caller last (none here: one line) */
            for (size_t q = 0; q < l->n_line; q++) {
                const Perftools__Profiles__Function *f = fn_by_id(l->line[q]->function_id);
                json_array_append_new(fr, json_pack("{s:o,s:o,s:o,s:I,s:I,s:o,s:o,s:I}", "name",
                                                    jstr(f->name), "system_name",
                                                    jstr(f->system_name), "file", jstr(f->filename),
                                                    "start_line", (json_int_t)f->start_line, "line",
                                                    (json_int_t)l->line[q]->line, "mapping",
                                                    m ? jstr(m->filename) : json_null(), "build_id",
                                                    m ? jstr(m->build_id) : json_null(), "address",
                                                    (json_int_t)l->address));
            }
        }
        json_object_set_new(js, "values", v);
        json_object_set_new(js, "labels", lb);
        json_object_set_new(js, "frames", fr);
        json_array_append_new(ss, js);
    }
    json_object_set_new(o, "samples", ss);
    return o;
}

int main(int argc, char **argv)
{
    size_t len = 0;
    unsigned char *buf;
    Profile *p;
    json_t *o;
    int r;
    if (argc != 2) {
        fprintf(stderr, "usage: pprof_read FILE.pb.gz\n");
        return 2;
    }
    if (!(buf = read_gz(argv[1], &len))) {
        fprintf(stderr, "pprof_read: %s does not decompress\n", argv[1]);
        return 2;
    }
    p = perftools__profiles__profile__unpack(NULL, len, buf);
    free(buf);
    if (!p) {
        fprintf(stderr, "pprof_read: %s is not a Profile message\n", argv[1]);
        return 2;
    }
    prof = p;
    if ((r = check()) != 0) {
        perftools__profiles__profile__free_unpacked(p, NULL);
        return r;
    }
    o = dump();
    r = json_dumpf(o, stdout, JSON_COMPACT) || putchar('\n') == EOF || fflush(stdout) ? 1 : 0;
    json_decref(o);
    perftools__profiles__profile__free_unpacked(p, NULL);
    return r;
}

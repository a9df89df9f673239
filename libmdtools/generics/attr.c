/* Custom attribute blobs (ECMA-335 II.23.3) decoded into value trees, and
 * printed as C# writes attributes. The constructor's signature (MethodDef
 * or MemberRef, II.23.2.1-2) gives the types of the fixed arguments; named
 * arguments carry their own FieldOrPropType (both in attr_types.c, with
 * the enums' underlying types); this file reads the values and holds the
 * entry points.
 *
 * The blob is untrusted: the prolog is checked, counts are checked against
 * the bytes left before allocating, nesting is capped, and every failure
 * names the blob and the offset inside it. */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <talloc.h>

#include <mdtools/attr.h>
#include <mdtools/assembly.h>
#include <mdtools/names.h>
#include <mdtools/nesting.h>
#include <mdtools/sig.h>
#include <mdtools/members.h>
#include <mdtools/tables.h>
#include <mdtools/token.h>

#include "generics/attr_int.h"
#include "generics/opts_int.h"

/* --- values --- */

static int read_number(struct ad *d, mdt_value *v, unsigned kind)
{
    unsigned size = mdt__value_size(kind);
    const uint8_t *p;
    int e;
    if ((e = rd_bytes(&d->r, &p, size, "value")))
        return e;
    uint64_t bits = 0;
    for (unsigned i = 0; i < size; i++)
        bits |= (uint64_t)p[i] << (8 * i);
    v->u = bits;
    v->i = (int64_t)bits;
    if (kind == MDT_VALUE_R4) {
        float f;
        uint32_t b32 = (uint32_t)bits;
        memcpy(&f, &b32, sizeof f);
        v->r = f;
    } else if (kind == MDT_VALUE_R8) {
        memcpy(&v->r, &bits, sizeof v->r);
    } else if ((kind == MDT_VALUE_I1 || kind == MDT_VALUE_I2 || kind == MDT_VALUE_I4) &&
               (bits >> (8 * size - 1) & 1)) {
        v->i = (int64_t)(bits | ~(((uint64_t)1 << (8 * size)) - 1));
    }
    return 0;
}

static int read_value(struct ad *d, const mdt_value_type *t, mdt_value *v)
{
    int e = 0;
    if (++d->depth > MDT_SIG_MAX_DEPTH)
        return rd_fail(&d->r, MDT_EBADIMAGE, "values nested deeper than %u", MDT_SIG_MAX_DEPTH);
    v->type = t;
    switch (t->kind) {
    MDT__CASE_PRIMITIVE:
        e = read_number(d, v, t->kind);
        break;
    case MDT_VALUE_ENUM: e = read_number(d, v, t->underlying); break;
    case MDT_VALUE_STRING:
    case MDT_VALUE_TYPE:
        e = mdt__attr_read_serstring(d, &v->str, &v->len, &v->null,
                                     t->kind == MDT_VALUE_STRING ? "string" : "type name");
        break;
    case MDT_VALUE_BOXED: {
        mdt_value *b;
        mdt_value_type *bt;
        size_t at = d->r.pos;
        if ((e = mdt__attr_type_of_blob(d, &bt)))
            break;
        if (bt->kind == MDT_VALUE_BOXED) {
            d->r.pos = at;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "boxed object inside a boxed object");
            break;
        }
        if (!(b = talloc_zero(d->ctx, mdt_value))) {
            e = mdt__attr_nomem();
            break;
        }
        if (!(e = read_value(d, bt, b)))
            v->boxed = b;
        break;
    }
    case MDT_VALUE_SZARRAY: {
        uint32_t n;
        size_t at = d->r.pos;
        if ((e = rd_u32(&d->r, &n, "array length")))
            break;
        if (n == UINT32_MAX) {
            v->null = true;
            break;
        }
        /* Every element takes at least one byte. */
        if (n > rd_left(&d->r)) {
            size_t left = rd_left(&d->r);
            d->r.pos = at;
            e = rd_fail(&d->r, MDT_EBADIMAGE, "array length %u exceeds the %zu bytes left", n,
                        left);
            break;
        }
        mdt_value *el = talloc_zero_array(d->ctx, mdt_value, n ? n : 1);
        if (!el) {
            e = mdt__attr_nomem();
            break;
        }
        for (uint32_t i = 0; i < n && !e; i++)
            e = read_value(d, t->elem, &el[i]);
        v->count = n;
        v->elems = el;
        break;
    }
    default: e = rd_fail(&d->r, MDT_EINVAL, "value of kind 0x%02x", t->kind);
    }
    d->depth--;
    return e;
}

/* --- entry points --- */

/* The type whose constructor `ctor` is. */
static int ctor_parent(const mdt_image *img, uint32_t ctor, uint32_t *type)
{
    mdt_row r;
    int e;
    if (MDT_TOKEN_TABLE(ctor) == MDT_TABLE_MethodDef)
        return mdt_member_owner(type, img, ctor);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_MemberRef, MDT_TOKEN_RID(ctor))) ||
        (e = mdt_row_token(type, &r, MDT_COL_MemberRef_Class)))
        return e;
    switch (MDT_TOKEN_TABLE(*type)) {
    case MDT_TABLE_TypeDef:
    case MDT_TABLE_TypeRef:
    case MDT_TABLE_TypeSpec: return 0;
    default: {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(img);
        pl.region = "MemberRef";
        pl.row = MDT_TOKEN_RID(ctor);
        return mdt__fail(MDT_EBADIMAGE, pl, "attribute constructor's parent 0x%08x is not a type",
                         *type);
    }
    }
}

int mdt_attr_decode(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t ctor,
                    const uint8_t *blob, uint32_t len, uint32_t blob_index,
                    mdt_enum_resolver resolver, void *payload)
{
    struct ad d = {0};
    char region[40];
    mdt_sig sig;
    mdt_row arow;
    uint16_t prolog, nnamed;
    int e;
    memset(out, 0, sizeof *out);
    if (MDT_TOKEN_TABLE(ctor) != MDT_TABLE_MethodDef &&
        MDT_TOKEN_TABLE(ctor) != MDT_TABLE_MemberRef)
        return mdt__fail_simple(MDT_EINVAL,
                                "attribute constructor 0x%08x is not a MethodDef or "
                                "MemberRef",
                                ctor);
    void *tmp = talloc_new(mem_ctx);
    uint64_t stamp;
    if (!tmp)
        return mdt__attr_nomem();
    /* Rows the decoder could not read on its way (the assembly's name, an
     * enum looked up by name) are not failures of a decode that succeeds. */
    stamp = mdt__err_stamp();
    d.ctx = tmp;
    d.img = img;
    d.resolver = resolver;
    d.payload = payload;
    d.r = mdt__blob_reader(img, region, blob, len, blob_index);
    /* Only the simple name: the whole identity would hash the public key
     * (SHA-1) for every attribute. */
    if (mdt_table_rows(img, MDT_TABLE_Assembly) &&
        mdt_row_get(&arow, img, MDT_TABLE_Assembly, 1) == 0)
        mdt_row_string(&d.asm_name, NULL, &arow, MDT_COL_Assembly_Name);
    out->img = img;
    out->ctor = ctor;
    if ((e = ctor_parent(img, ctor, &out->type)) || (e = mdt_sig_of_token(tmp, &sig, img, ctor)))
        goto fail;
    if (sig.kind != MDT_SIG_METHOD) {
        e = mdt__fail_simple(MDT_EBADIMAGE, "attribute constructor 0x%08x has no method signature",
                             ctor);
        goto fail;
    }
    if (MDT_TOKEN_TABLE(out->type) == MDT_TABLE_TypeSpec) {
        mdt_sig ts;
        if ((e = mdt_sig_of_token(tmp, &ts, img, out->type)))
            goto fail;
        if (ts.type->kind == MDT_ELEMENT_TYPE_GENERICINST) {
            d.ngargs = ts.type->nargs;
            d.gargs = ts.type->args;
        }
    }
    if ((e = rd_u16(&d.r, &prolog, "prolog")))
        goto fail;
    if (prolog != 0x0001) {
        d.r.pos = 0;
        e = rd_fail(&d.r, MDT_EBADIMAGE, "custom attribute prolog is 0x%04x, not 0x0001", prolog);
        goto fail;
    }
    const mdt_method_sig *m = sig.method;
    mdt_value *fixed = talloc_zero_array(tmp, mdt_value, m->nparams ? m->nparams : 1);
    if (!fixed) {
        e = mdt__attr_nomem();
        goto fail;
    }
    for (uint32_t i = 0; i < m->nparams; i++) {
        mdt_value_type *t;
        if ((e = mdt__attr_type_of_sig(&d, m->params[i], &t)) || (e = read_value(&d, t, &fixed[i])))
            goto fail;
    }
    out->nfixed = m->nparams;
    out->fixed = fixed;
    if ((e = rd_u16(&d.r, &nnamed, "named argument count")))
        goto fail;
    /* Each named argument takes at least four bytes. */
    if (nnamed > rd_left(&d.r) / 4) {
        d.r.pos -= 2;
        e = rd_fail(&d.r, MDT_EBADIMAGE,
                    "named argument count %u exceeds what the %zu bytes left "
                    "can hold",
                    nnamed, rd_left(&d.r) - 2);
        goto fail;
    }
    mdt_named_arg *named = talloc_zero_array(tmp, mdt_named_arg, nnamed ? nnamed : 1);
    if (!named) {
        e = mdt__attr_nomem();
        goto fail;
    }
    for (uint32_t i = 0; i < nnamed; i++) {
        uint8_t kind;
        mdt_value_type *t;
        bool null;
        size_t nlen;
        if ((e = rd_u8(&d.r, &kind, "named argument kind")))
            goto fail;
        if (kind != 0x53 && kind != 0x54) {
            d.r.pos--;
            e = rd_fail(&d.r, MDT_EBADIMAGE,
                        "named argument kind 0x%02x is neither FIELD (0x53) nor PROPERTY (0x54)",
                        kind);
            goto fail;
        }
        named[i].property = kind == 0x54;
        if ((e = mdt__attr_type_of_blob(&d, &t)) ||
            (e = mdt__attr_read_serstring(&d, &named[i].name, &nlen, &null, "named argument name")))
            goto fail;
        if (null) {
            d.r.pos--;
            e = rd_fail(&d.r, MDT_EBADIMAGE, "named argument name is null");
            goto fail;
        }
        if ((e = read_value(&d, t, &named[i].value)))
            goto fail;
    }
    out->nnamed = nnamed;
    out->named = named;
    mdt__err_back_to(stamp);
    return 0;
fail:
    talloc_free(tmp);
    memset(out, 0, sizeof *out);
    return e;
}

int mdt_attr_of_row(void *mem_ctx, mdt_attr *out, const mdt_image *img, uint32_t rid,
                    mdt_enum_resolver resolver, void *payload)
{
    mdt_row r;
    uint32_t ctor;
    const uint8_t *blob;
    uint32_t len;
    int e;
    memset(out, 0, sizeof *out);
    if ((e = mdt_row_get(&r, img, MDT_TABLE_CustomAttribute, rid)) ||
        (e = mdt_row_token(&ctor, &r, MDT_COL_CustomAttribute_Type)) ||
        (e = mdt_row_blob(&blob, &len, &r, MDT_COL_CustomAttribute_Value)))
        return e;
    return mdt_attr_decode(mem_ctx, out, img, ctor, blob, len,
                           mdt_row_raw(&r, MDT_COL_CustomAttribute_Value), resolver, payload);
}

int mdt_attr_decimal(mdt_decimal *out, const mdt_attr *a)
{
    if (!mdt__type_is(a->img, a->type, "System.Runtime.CompilerServices",
                      "DecimalConstantAttribute") ||
        a->nfixed != 5)
        return mdt__fail_simple(MDT_EINVAL, "not a DecimalConstantAttribute(byte, byte, uint, "
                                            "uint, uint)");
    for (int i = 0; i < 5; i++) {
        unsigned k = a->fixed[i].type->kind;
        if (i < 2 ? k != MDT_VALUE_U1 : k != MDT_VALUE_U4 && k != MDT_VALUE_I4)
            return mdt__fail_simple(MDT_EINVAL,
                                    "DecimalConstantAttribute argument %d has "
                                    "element type 0x%02x",
                                    i + 1, k);
    }
    out->scale = (uint8_t)a->fixed[0].u;
    out->negative = a->fixed[1].u != 0;
    out->hi = (uint32_t)a->fixed[2].u;
    out->mid = (uint32_t)a->fixed[3].u;
    out->lo = (uint32_t)a->fixed[4].u;
    if (out->scale > 28) {
        mdt_place pl = MDT_PLACE_NONE;
        pl.file = mdt_image_name(a->img);
        pl.region = "CustomAttribute";
        return mdt__fail(MDT_EBADIMAGE, pl, "DecimalConstantAttribute scale %u exceeds 28",
                         out->scale);
    }
    return 0;
}

int mdt_attr_format(void *mem_ctx, char **out, const mdt_attr *a, const mdt_name_opts *o)
{
    bool friendly = o && (o->flags & MDT_NAME_FRIENDLY);
    mdt_name_opts no = {o ? o->style : MDT_STYLE_FULL, o ? o->flags : 0, MDT_NAME_OPTS_VERSION,
                        NULL, NULL};
    char *name;
    sb s;
    int e;
    if ((e = gen_opts_check(o, "mdt_attr_format")))
        return e;
    if ((e = mdt_token_name(NULL, &name, a->img, a->type, &no)))
        return e;
    sb_init(&s, mem_ctx);
    sb_addc(&s, '[');
    size_t n = strlen(name);
    if (friendly && n > 9 && !strcmp(name + n - 9, "Attribute"))
        n -= 9;
    sb_add(&s, name, n);
    talloc_free(name);
    if (a->nfixed || a->nnamed) {
        sb_addc(&s, '(');
        for (uint32_t i = 0; i < a->nfixed && !e; i++) {
            if (i)
                sb_adds(&s, ", ");
            e = mdt__put_value(&s, &a->fixed[i], o);
        }
        for (uint32_t i = 0; i < a->nnamed && !e; i++) {
            if (i || a->nfixed)
                sb_adds(&s, ", ");
            sb_addf(&s, "%s = ", a->named[i].name);
            e = mdt__put_value(&s, &a->named[i].value, o);
        }
        sb_addc(&s, ')');
    }
    sb_addc(&s, ']');
    if (e) {
        sb_discard(&s);
        return e;
    }
    return sb_finish(&s, out);
}

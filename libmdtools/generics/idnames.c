/* Names of runtime IDs: a ClassID or FunctionID of the maps (tokens layer)
 * printed through the generics formatter (names.h, descriptor.h), e.g.
 * `MyClass<System.Int32>::Foo<System.Single>` with `System.__Canon` kept
 * where the runtime shares code. The map's signal-safe describe and lookup
 * calls supply the tree; building the name allocates, so nothing here is
 * for signal handlers. */
#include "config.h"

#include <talloc.h>

#include <mdtools/descriptor.h>
#include <mdtools/idmap.h>
#include <mdtools/names.h>

#include "generics/opts_int.h"
#include "util/error.h"

#define MAX_ARGS 64 /* type arguments of one generic, as the runtime allows */

/* Pre-order nodes from mdt_idmap_class_describe into a descriptor tree. */
static int node_desc(void *ctx, const mdt_idmap_type_node *nodes, size_t n, size_t *pos,
                     const mdt_desc **out)
{
    if (*pos >= n)
        return mdt__fail_simple(MDT_EINVAL, "class description ends early");
    const mdt_idmap_type_node *nd = &nodes[(*pos)++];
    mdt_desc *d = talloc_zero(ctx, mdt_desc);
    if (!d)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if (nd->prim == MDT_IDMAP_PRIM_CANON) {
        d->kind = MDT_DESC_CANON;
    } else if (nd->prim != MDT_IDMAP_PRIM_NONE) {
        d->kind = MDT_DESC_PRIM;
        d->prim = nd->prim;
    }
    switch (nd->shape) {
    case MDT_IDMAP_SHAPE_TYPEDEF: {
        if (d->kind) { /* a primitive or __Canon: its arguments, if any, are not printed */
            for (uint32_t i = 0; i < nd->nargs; i++) {
                const mdt_desc *skip;
                int e = node_desc(ctx, nodes, n, pos, &skip);
                if (e)
                    return e;
            }
            break;
        }
        if (!nd->image)
            return mdt__fail_simple(
                MDT_ENOTFOUND, "ClassID 0x%llx: module 0x%llx has no open image",
                (unsigned long long)nd->class_id, (unsigned long long)nd->module);
        if (nd->nargs > MAX_ARGS)
            return mdt__fail_simple(MDT_EINVAL, "ClassID 0x%llx has %u type arguments",
                                    (unsigned long long)nd->class_id, nd->nargs);
        d->kind = MDT_DESC_TYPEDEF;
        d->img = nd->image;
        d->token = nd->token;
        d->nargs = nd->nargs;
        const mdt_desc **args = talloc_array(d, const mdt_desc *, nd->nargs ? nd->nargs : 1);
        if (!args)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        for (uint32_t i = 0; i < nd->nargs; i++) {
            int e = node_desc(ctx, nodes, n, pos, &args[i]);
            if (e)
                return e;
        }
        d->args = args;
        break;
    }
    case MDT_IDMAP_SHAPE_SZARRAY:
    case MDT_IDMAP_SHAPE_ARRAY:
    case MDT_IDMAP_SHAPE_PTR:
    case MDT_IDMAP_SHAPE_BYREF: {
        static const uint8_t kinds[] = {[MDT_IDMAP_SHAPE_SZARRAY] = MDT_DESC_SZARRAY,
                                        [MDT_IDMAP_SHAPE_ARRAY] = MDT_DESC_ARRAY,
                                        [MDT_IDMAP_SHAPE_PTR] = MDT_DESC_PTR,
                                        [MDT_IDMAP_SHAPE_BYREF] = MDT_DESC_BYREF};
        d->kind = kinds[nd->shape];
        d->rank = nd->rank;
        int e = node_desc(ctx, nodes, n, pos, &d->elem);
        if (e)
            return e;
        break;
    }
    default:
        return mdt__fail_simple(MDT_ENOTFOUND, "ClassID 0x%llx is not known to the map",
                                (unsigned long long)nd->class_id);
    }
    *out = d;
    return 0;
}

/* The descriptor of a ClassID (any generation when gen is 0). */
static int class_desc(void *ctx, const mdt_idmap *map, uintptr_t class_id, uint64_t gen,
                      const mdt_desc **out)
{
    size_t count = 0, cap = 64, pos = 0;
    mdt_idmap_type_node *nodes = NULL;
    for (int pass = 0; pass < 3; pass++) { /* the map may change between calls */
        nodes = talloc_realloc(ctx, nodes, mdt_idmap_type_node, cap);
        if (!nodes)
            return mdt__fail_simple(MDT_ENOMEM, "out of memory");
        int e = mdt_idmap_class_describe(nodes, cap, &count, map, class_id, gen);
        if (e)
            return e;
        if (count <= cap)
            return node_desc(ctx, nodes, count, &pos, out);
        cap = count;
    }
    return mdt__fail_simple(MDT_EINVAL, "ClassID 0x%llx kept changing while described",
                            (unsigned long long)class_id);
}

int mdt_idmap_class_name(void *mem_ctx, char **out, const mdt_idmap *map, uintptr_t class_id,
                         uint64_t gen, const mdt_name_opts *opts)
{
    void *tmp = talloc_new(NULL);
    const mdt_desc *d;
    const mdt_type *t;
    int e;
    if (!tmp)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if ((e = gen_opts_check(opts, "mdt_idmap_class_name"))) {
        talloc_free(tmp);
        return e;
    }
    if (!(e = class_desc(tmp, map, class_id, gen, &d)) && !(e = mdt_desc_to_type(tmp, &t, d)))
        e = mdt_type_name(mem_ctx, out, t, opts);
    talloc_free(tmp);
    return e;
}

int mdt_idmap_function_name(void *mem_ctx, char **out, const mdt_idmap *map, uintptr_t function_id,
                            uint64_t gen, const mdt_name_opts *opts)
{
    void *tmp = talloc_new(NULL);
    uintptr_t margs[MAX_ARGS];
    mdt_idmap_function_info fi;
    mdt_idmap_module_info mi;
    const mdt_desc *owner = NULL, *mdesc[MAX_ARGS];
    int e;
    if (!tmp)
        return mdt__fail_simple(MDT_ENOMEM, "out of memory");
    if ((e = gen_opts_check(opts, "mdt_idmap_function_name"))) {
        talloc_free(tmp);
        return e;
    }
    if ((e = mdt_idmap_function_lookup(&fi, margs, MAX_ARGS, map, function_id, gen)) ||
        (e = mdt_idmap_module_lookup(&mi, map, fi.module, 0)))
        goto done;
    if (!mi.image) {
        e = mdt__fail_simple(MDT_ENOTFOUND, "FunctionID 0x%llx: module 0x%llx has no open image",
                             (unsigned long long)function_id, (unsigned long long)fi.module);
        goto done;
    }
    if (fi.nargs > MAX_ARGS) {
        e = mdt__fail_simple(MDT_EINVAL, "FunctionID 0x%llx has %u method type arguments",
                             (unsigned long long)function_id, fi.nargs);
        goto done;
    }
    for (uint32_t i = 0; i < fi.nargs; i++)
        if ((e = class_desc(tmp, map, margs[i], 0, &mdesc[i])))
            goto done;
    /* The owning class carries the class type arguments; without it (shared
     * code reported without its class) the method prints uninstantiated. */
    if (fi.class_id && (e = class_desc(tmp, map, fi.class_id, 0, &owner)))
        goto done;
    if (owner && owner->kind == MDT_DESC_TYPEDEF)
        e = mdt_inst_name(mem_ctx, out, mi.image, fi.token, owner->nargs, owner->args, fi.nargs,
                          mdesc, opts);
    else
        e = mdt_inst_name(mem_ctx, out, mi.image, fi.token, 0, NULL, fi.nargs, mdesc, opts);
done:
    talloc_free(tmp);
    return e;
}

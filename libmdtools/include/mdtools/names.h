/* mdtools: printing types, members and signatures as people read them.
 *
 * One formatter, several styles (the project's doc/names.md): FULL is
 * canonical and exact (`Ns.Outer+Inner<System.Int32>`, `!0`,
 * `Type::Method<A>`; a generic type named without an instantiation shows
 * its parameters, `Dictionary<TKey,TValue>` for a TypeDef, `Dictionary<,>`
 * from the arity suffix of a TypeRef);
 * REFLECTION prints as Type.ToString() does (``List`1[System.Int32]``);
 * IL prints ILAsm syntax (`class [mscorlib]System.String`). The FRIENDLY
 * flag shortens names and uses C# keywords.
 *
 * Names are built under the caller's talloc context. Nothing here trusts the
 * image: nesting chains, resolution-scope chains and TypeSpecs that refer to
 * themselves are detected and reported as errors (MDT_EBADIMAGE) naming the
 * rows involved. Thread-safe on an open image. */
#ifndef MDTOOLS_NAMES_H
#define MDTOOLS_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include <mdtools/sig.h>
/* Owners and nesting (mdt_member_owner, mdt_token_owner,
 * mdt_typedef_enclosing, mdt_typedef_by_name) were declared here; they
 * live in <mdtools/nesting.h> now, included for the code that includes
 * only this header. */
#include <mdtools/nesting.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mdt_name_style { MDT_STYLE_FULL = 0, MDT_STYLE_REFLECTION, MDT_STYLE_IL };

enum mdt_name_flags {
    MDT_NAME_FRIENDLY = 1u << 0,    /* short names, C# keywords (int, string, ...) */
    MDT_NAME_PARAM_NAMES = 1u << 1, /* !0 -> T from the GenericParam table */
    MDT_NAME_METADATA = 1u << 2,    /* full style with every type named as stored:
                                       arity suffixes kept, no parameter list added
                                       (``Dictionary`2``, ``List`1<System.Int32>``):
                                       the `metadata_name` of doc/names.md */
    MDT_NAME_SIGNATURE = 1u << 3    /* a method (MethodDef, MemberRef of a method,
                                       MethodSpec) ends with its parameter types,
                                       `Enumerable::Sum(System.Collections.Generic.
                                       IEnumerable<System.Int64>)`, in the same style,
                                       generic parameters substituted as the context
                                       (or a MethodSpec, or mdt_inst_name's
                                       arguments) says: overloads told apart */
};

/* What VAR and MVAR stand for. Arguments are substituted when given; else
 * with MDT_NAME_PARAM_NAMES the parameter's name is looked up on the owner
 * (a TypeDef / MethodDef token of `img`); else `!N` / `!!N`. */
typedef struct mdt_generic_context {
    uint32_t ntype_args;
    const mdt_type *const *type_args;
    uint32_t nmethod_args;
    const mdt_type *const *method_args;
    const mdt_image *img;
    uint32_t type_owner;
    uint32_t method_owner;
} mdt_generic_context;

typedef struct mdt_name_cache mdt_name_cache;

/* How a name is printed. Start from MDT_NAME_OPTS_INIT, then set what
 * differs (libgit2's pattern): `mdt_name_opts o = MDT_NAME_OPTS_INIT;
 * o.style = MDT_STYLE_IL;`. `version` says which layout of this struct the
 * caller was built with, so that a later libmdtools can add members and
 * still read a program built against this header, and this one refuses a
 * program built for a later one (MDT_EINVAL, "mdt_name_opts column
 * version") rather than ignore members it does not know. It sits in what
 * was the upper half of `flags` in libmdtools 1:0:0, always zero there: 0
 * is that release's layout, the same as version 1 (a struct zeroed by hand
 * reads as version 0, as do programs built then). */
#define MDT_NAME_OPTS_VERSION 1

typedef struct mdt_name_opts {
    int style;                       /* enum mdt_name_style */
    uint16_t flags;                  /* enum mdt_name_flags */
    uint16_t version;                /* MDT_NAME_OPTS_VERSION */
    const mdt_generic_context *gctx; /* may be NULL */
    mdt_name_cache *cache;           /* may be NULL; see mdt_name_cache_new */
} mdt_name_opts;

/* Full style, no flags, no context, no cache: the defaults of a NULL opts. */
#define MDT_NAME_OPTS_INIT                                                                         \
    {                                                                                              \
        MDT_STYLE_FULL, 0, MDT_NAME_OPTS_VERSION, NULL, NULL                                       \
    }

/* A memo of the names of one image's TypeDefs and TypeRefs in one style and
 * set of flags, for callers that print many names of the same image (batch
 * printers, inspectors): each TypeDef/TypeRef name is then built once, as
 * libmono's class cache does. Used by the functions below when given in
 * mdt_name_opts with a matching image, style and flags, ignored otherwise
 * (and for IL names, whose scopes depend on the context). Allocated under
 * mem_ctx; it borrows img, so free it before the image. NOT thread-safe:
 * one cache per thread. Errors: MDT_ENOMEM. */
int mdt_name_cache_new(void *mem_ctx, mdt_name_cache **out, const mdt_image *img, int style,
                       unsigned flags);

/* A type. `opts` may be NULL (full style). Errors: MDT_EINVAL (a NULL type,
 * a node of a kind that has no name), MDT_ENOMEM, and those of reading the
 * rows and signatures the name needs, located: MDT_EBADIMAGE (including a
 * nesting, scope or TypeSpec cycle), MDT_ETRUNC, MDT_ENOHEAP,
 * MDT_ENOTFOUND (a row that does not exist), MDT_EUNSUPPORTED (a
 * signature mdtools does not read). */
int mdt_type_name(void *mem_ctx, char **out, const mdt_type *t, const mdt_name_opts *opts);

/* The name of what a token denotes: TypeDef, TypeRef, TypeSpec (types);
 * MethodDef, Field, MemberRef, MethodSpec, Property, Event (`Parent::name`,
 * MethodSpec with `<args>`); ExportedType (`Ns.Outer+Inner`, nesting
 * through its Implementation chain); Module and ModuleRef (`[module X]`);
 * Assembly and AssemblyRef (display name); File; a portable PDB's
 * Document (its name blob decoded: `/src/app/Program.cs`). Errors:
 * MDT_EINVAL (a token of a table that names nothing), MDT_ENOTFOUND (no
 * such row), MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP,
 * MDT_EUNSUPPORTED (as for mdt_type_name). */
int mdt_token_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                   const mdt_name_opts *opts);

/* A decoded signature, e.g. `instance System.Void(System.Int32,...,System.String)`,
 * `System.Int32 modopt(X)&`, locals as `(T0,T1 pinned)`, MethodSpec as `<A,B>`.
 * Errors: MDT_EINVAL (an unknown signature kind, or a signature that a
 * failed decode left empty: decoders zero `sig` when they fail), and those of
 * mdt_type_name: MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP,
 * MDT_ENOTFOUND, MDT_EUNSUPPORTED. */
int mdt_sig_name(void *mem_ctx, char **out, const mdt_sig *sig, const mdt_name_opts *opts);

/* The printed signature a row carries, as mdt_sig_of_token then
 * mdt_sig_name print it, with one allocation, the name's (exact size,
 * under mem_ctx): the tree is decoded on the stack, or, when it is larger
 * than 4 KiB (0.04% of the Mono 4.5 framework's signatures), under a
 * context of its own freed before the call returns; in the full style most
 * names are printed straight from the blob, without a tree. For callers
 * that want the text and not the tree: about half the instructions of the
 * two calls (bench/README.md, issue 28). Tokens as mdt_sig_of_token: MethodDef, MemberRef,
 * Field, Property, StandAloneSig, TypeSpec, MethodSpec. Errors: MDT_EINVAL
 * (no out, or a token of another table), MDT_ENOTFOUND (no such row),
 * MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP, MDT_EUNSUPPORTED
 * (those of mdt_sig_of_token and mdt_sig_name). */
int mdt_sig_name_of_token(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                          const mdt_name_opts *opts);

/* An arena of names: chunks of memory (under mem_ctx) that names are
 * printed into one after the other, for a caller that drops many names at
 * once (a pass over a module, a batch of lines) and wants neither a talloc
 * block a name (about 480 instructions of malloc, free and talloc's
 * header: a third of decoding and printing a signature) nor to manage
 * buffers. `chunk`: bytes a chunk, 256 to 2^30, 0 for 64 KiB. Freed with
 * talloc_free(a) or with mem_ctx. Not thread-safe: one arena, one thread.
 * Errors: MDT_EINVAL (no out, a chunk size out of range), MDT_ENOMEM. */
typedef struct mdt_name_arena mdt_name_arena;
int mdt_name_arena_new(void *mem_ctx, mdt_name_arena **out, size_t chunk);
/* Drop every name of the arena (their pointers are invalid after); its
 * first chunk is kept for the next names, later ones are freed. NULL: no
 * effect. */
void mdt_name_arena_reset(mdt_name_arena *a);
/* mdt_sig_name_of_token's name, in the arena: *out (NUL-terminated) lives
 * until mdt_name_arena_reset or the arena's free; *len (may be NULL) gets
 * its length. No allocation but a new chunk when the one in use is full
 * (and a block of its own for a name longer than a chunk). The same text
 * as mdt_sig_name_of_token; in the full style most names are printed
 * straight from the blob, without a tree: about 0.55x the instructions of
 * the buffer API (bench/README.md, issue 28). Errors: MDT_EINVAL (no arena, no out, a
 * token of another table), and those of mdt_sig_name_of_token:
 * MDT_ENOTFOUND, MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC, MDT_ENOHEAP,
 * MDT_EUNSUPPORTED; on an error *out is NULL. */
int mdt_sig_name_of_token_arena(mdt_name_arena *a, const char **out, size_t *len,
                                const mdt_image *img, uint32_t token, const mdt_name_opts *opts);

/* The same three into a caller's buffer of `size` bytes, NUL-terminated,
 * *len (may be NULL) set to the name's length. Nothing is allocated except
 * when a TypeSpec whose tree is unusually large must be expanded. Errors as
 * above (MDT_EINVAL, also for no buffer; MDT_ENOMEM, MDT_EBADIMAGE,
 * MDT_ENOHEAP, MDT_ENOTFOUND, MDT_EUNSUPPORTED), and MDT_ETRUNC also when
 * the name needs `size` bytes or more (buf then holds a truncated prefix). */
int mdt_type_name_buf(char *buf, size_t size, size_t *len, const mdt_type *t,
                      const mdt_name_opts *opts);
int mdt_sig_name_buf(char *buf, size_t size, size_t *len, const mdt_sig *sig,
                     const mdt_name_opts *opts);
int mdt_token_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img, uint32_t token,
                       const mdt_name_opts *opts);

/* Ask the memory system, without waiting, for what naming a MethodDef or
 * Field token (mdt_token_name_buf and the others) reads first: for a
 * caller that knows which tokens it will name a little later, at random
 * over large images (mdinspect batch), so that their cache misses overlap.
 * In two steps, each needing what the one before asked for to have
 * arrived, so a few hundred instructions apart (e.g. over the next few
 * tokens): step 0 asks for the token's row and its slot in the owner
 * index; step 1 reads them and asks for the name in #Strings and the
 * owner's name in `cache` (may be NULL; the cache the caller will name
 * with, which no other thread may be filling meanwhile). Reads nothing the
 * printer would not, changes nothing, records no error and cannot fail; a
 * token of another table, a row outside the tables stream or an index not
 * yet built asks for less or nothing. */
void mdt_token_name_prefetch(const mdt_image *img, uint32_t token, const mdt_name_cache *cache,
                             unsigned step);

/* The metadata name of a type or member token (doc/names.md): the name
 * mdt_token_name prints in the full style with MDT_NAME_METADATA, every
 * type as stored (``Dictionary`2``, ``List`1<System.Int32>::Add``), which
 * mdinspect's JSON and batch --json give as `metadata_name` beside the
 * name. For the tokens mdt_token_is_type_or_member accepts, with a row
 * id. `cache` may be NULL, or one made for img by mdt_name_cache_new with
 * MDT_STYLE_FULL and MDT_NAME_METADATA (another is ignored). The _buf form
 * writes into buf as mdt_token_name_buf does. Errors: MDT_EINVAL (a token
 * of another table, a nil token, no out or no buffer), MDT_ENOTFOUND (no
 * such row), MDT_ENOMEM, MDT_EBADIMAGE, MDT_ETRUNC (also: the _buf form's
 * name needs `size` bytes or more), MDT_ENOHEAP, MDT_EUNSUPPORTED (as for
 * mdt_token_name). Thread-safe on an open image, with a cache per thread. */
int mdt_token_metadata_name(void *mem_ctx, char **out, const mdt_image *img, uint32_t token,
                            mdt_name_cache *cache);
int mdt_token_metadata_name_buf(char *buf, size_t size, size_t *len, const mdt_image *img,
                                uint32_t token, mdt_name_cache *cache);

/* The generic parameters of a TypeDef or MethodDef `owner` of img as its
 * declaration writes them (doc/names.md, "Declarations"), in the style of
 * opts (NULL: full; its gctx and cache are not used: every parameter a
 * constraint mentions is named, `T`, or `!T` / `!!T` in IL).
 * The IL style writes ILAsm's list into *params, as ILDasm prints it:
 * variance (`+ `, `- `), `class`, `valuetype`, `byreflike`, `.ctor`, the
 * constraint types in parentheses, the name
 * (`<class T,valuetype .ctor ([System.Runtime]System.ValueType) U,+ V>`),
 * and "" into *where. The other styles write C#'s: *params the names with
 * `in` / `out` for variance (`<T,U,out V>`; `[T,U,out V]` in the
 * reflection style, as MethodInfo.ToString() writes `As[T]`), *where the clauses of the
 * parameters that have constraints, joined by a space
 * (`where T : class, System.IComparable<T>, new() where U : struct`), with
 * `struct`, `unmanaged` (a System.ValueType constraint with the
 * UnmanagedType modreq), `new()` and `allows ref struct` (flag 0x20) for
 * what C# writes as keywords. Both are "" when the owner has no generic
 * parameters. Allocated under mem_ctx. Errors: MDT_EINVAL (no image, no
 * outputs, a token of another table), MDT_ENOMEM, and those of reading the
 * rows and naming the constraints, located: MDT_EBADIMAGE (more than 65536
 * parameters or 4096 constraints on one, a name longer than the printer's
 * bound), MDT_ETRUNC, MDT_ENOHEAP, MDT_ENOTFOUND, MDT_EUNSUPPORTED. */
int mdt_generic_decl(void *mem_ctx, char **params, char **where, const mdt_image *img,
                     uint32_t owner, const mdt_name_opts *opts);

/* `name` (len bytes) as an ILAsm identifier (II.5.3) for a declaration a
 * caller prints itself (a member, a parameter, a class): as it is when the
 * assembler reads it back as one name (an ID, a dotted name of IDs, `.ctor`,
 * `.cctor`), else in single quotes with ' and \\ escaped (`'value'`,
 * `'<Module>'`, `'I<int32>.M'`). An ID is letters, digits, _ $ @ ` ? not
 * starting with a digit, and no keyword of the assembler (`class`, `value`,
 * an instruction name such as `add`). The IL style of the printers above
 * quotes the same way (a type's namespace and name component by
 * component: `System.'<>c'`). Errors: MDT_EINVAL (no name or no out),
 * MDT_ENOMEM. */
int mdt_ilasm_name(void *mem_ctx, char **out, const char *name, size_t len);

/* `s` (len bytes) as an ILAsm quoted string (II.5.2 QSTRING: the native
 * module and entry of `pinvokeimpl("x.dll" as "f")`, a marshaler's name)
 * for a declaration a caller prints itself: in double quotes, with " and
 * \\ escaped by a backslash, any other byte below 0x20 and 0x7f as a
 * backslash and three octal digits (`\012`), every other byte as it is
 * (UTF-8 stays UTF-8). mdt_marshal_text quotes a custom marshaler's
 * strings the same way (it refuses control bytes there). Errors:
 * MDT_EINVAL (no out, or s NULL with len > 0), MDT_ENOMEM. */
int mdt_ilasm_string(void *mem_ctx, char **out, const char *s, size_t len);

/* The marshalling descriptor of a field or parameter `token` (its
 * FieldMarshal row's NativeType blob, II.23.4 with the CoreCLR augments)
 * as ILAsm spells it inside `marshal(...)`, the way ILDasm writes it:
 * `lpwstr`, `bool`, `fixed sysstring [32]`, `fixed array [4] int32`,
 * `int32[10 + 1]` (count and size parameter), `safearray bstr`,
 * `custom ("Type, Assembly", "cookie")`. A parameter's token is its Param
 * row's (sequence 0: the return value). *out is a talloc child of mem_ctx,
 * NULL on failure. Errors: MDT_EINVAL (no out, no image, a token neither
 * Field nor Param); MDT_ENOTFOUND (no FieldMarshal row for it);
 * MDT_EBADIMAGE, MDT_ETRUNC (a damaged descriptor: bytes past its end, an
 * array of arrays, a cut-off size; located in #Blob); MDT_EUNSUPPORTED (a
 * native or variant type ILAsm has no word for, a control byte in a
 * custom marshaler's name); MDT_ENOHEAP; MDT_ENOMEM. */
int mdt_marshal_text(void *mem_ctx, char **out, const mdt_image *img, uint32_t token);

#ifdef __cplusplus
}
#endif
#endif

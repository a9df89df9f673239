# libmdtools: the library. Included from the top-level Makefile.am.
lib_LTLIBRARIES += libmdtools/libmdtools.la

mdtoolsincludedir = $(includedir)/mdtools
mdtoolsinclude_HEADERS = \
	libmdtools/include/mdtools/mdtools.h \
	libmdtools/include/mdtools/errors.h \
	libmdtools/include/mdtools/file.h \
	libmdtools/include/mdtools/token.h \
	libmdtools/include/mdtools/idmap.h \
	libmdtools/include/mdtools/idmap_code.h \
	libmdtools/include/mdtools/image.h \
	libmdtools/include/mdtools/tables.h \
	libmdtools/include/mdtools/tables.def \
	libmdtools/include/mdtools/heaps.h \
	libmdtools/include/mdtools/assembly.h \
	libmdtools/include/mdtools/sig.h \
	libmdtools/include/mdtools/names.h \
	libmdtools/include/mdtools/nesting.h \
	libmdtools/include/mdtools/members.h \
	libmdtools/include/mdtools/modset.h \
	libmdtools/include/mdtools/typeref.h \
	libmdtools/include/mdtools/value.h \
	libmdtools/include/mdtools/attr.h \
	libmdtools/include/mdtools/descriptor.h \
	libmdtools/include/mdtools/pdb.h \
	libmdtools/include/mdtools/il.h \
	libmdtools/include/mdtools/opcodes.def \
	libmdtools/include/mdtools/pe.h \
	libmdtools/include/mdtools/strongname.h \
	libmdtools/include/mdtools/resources.h \
	libmdtools/include/mdtools/bundle.h

# The library's objects are compiled once, into a convenience library that
# both the installed libmdtools.la and the profiler's shared object link
# (profiler/local.mk says why the profiler carries its own copy).
MDT_LIB_SOURCES = \
	libmdtools/util/error.h \
	libmdtools/util/error.c \
	libmdtools/util/reader.h \
	libmdtools/util/reader.c \
	libmdtools/util/strbuf.h \
	libmdtools/util/strbuf.c \
	libmdtools/util/warnings.h \
	libmdtools/util/warnings.c \
	libmdtools/util/utf16.h \
	libmdtools/util/utf16.c \
	libmdtools/util/file.h \
	libmdtools/util/hash.h \
	libmdtools/util/hex.h \
	libmdtools/util/file.c \
	libmdtools/image/container.h \
	libmdtools/image/container.c \
	libmdtools/image/pe.c \
	libmdtools/image/ranges.c \
	libmdtools/image/ondemand.c \
	libmdtools/image/webcil.c \
	libmdtools/open/bundle.c \
	libmdtools/md/md_int.h \
	libmdtools/md/root.c \
	libmdtools/md/tables.c \
	libmdtools/md/schema.c \
	libmdtools/md/cells.c \
	libmdtools/md/heaps.c \
	libmdtools/md/find.c \
	libmdtools/md/owner.c \
	libmdtools/md/members.c \
	libmdtools/md/identity.c \
	libmdtools/md/nesting_int.h \
	libmdtools/md/nesting.c \
	libmdtools/md/runs.c \
	libmdtools/md/columns.c \
	libmdtools/md/rows.c \
	libmdtools/md/lazy.c \
	libmdtools/open/open_int.h \
	libmdtools/open/open.c \
	libmdtools/tokens/base_int.h \
	libmdtools/tokens/wmap_int.h \
	libmdtools/tokens/grace_int.h \
	libmdtools/tokens/table_int.h \
	libmdtools/tokens/idmap_int.h \
	libmdtools/tokens/handles_int.h \
	libmdtools/tokens/records_int.h \
	libmdtools/tokens/args_int.h \
	libmdtools/tokens/writer_int.h \
	libmdtools/tokens/deps_int.h \
	libmdtools/tokens/index_int.h \
	libmdtools/tokens/presence_int.h \
	libmdtools/tokens/lifetime_int.h \
	libmdtools/tokens/plugs_int.h \
	libmdtools/tokens/ranges_int.h \
	libmdtools/tokens/trace_int.h \
	libmdtools/tokens/grace.c \
	libmdtools/tokens/table.c \
	libmdtools/tokens/wmap.c \
	libmdtools/tokens/records.c \
	libmdtools/tokens/args.c \
	libmdtools/tokens/handles.c \
	libmdtools/tokens/writer.c \
	libmdtools/tokens/lifetime.c \
	libmdtools/tokens/deps.c \
	libmdtools/tokens/modules.c \
	libmdtools/tokens/classes.c \
	libmdtools/tokens/functions.c \
	libmdtools/tokens/index.c \
	libmdtools/tokens/presence.c \
	libmdtools/tokens/ranges.c \
	libmdtools/tokens/ranges_tomb.c \
	libmdtools/tokens/ranges_write.c \
	libmdtools/tokens/ranges_part.c \
	libmdtools/tokens/describe.c \
	libmdtools/tokens/fetch.c \
	libmdtools/tokens/idmap.c \
	libmdtools/tokens/trace.c \
	libmdtools/typeref/modset_int.h \
	libmdtools/typeref/modset.c \
	libmdtools/typeref/modview.c \
	libmdtools/typeref/mirror.c \
	libmdtools/typeref/scope.c \
	libmdtools/typeref/index_int.h \
	libmdtools/typeref/index.c \
	libmdtools/typeref/result_int.h \
	libmdtools/typeref/result.c \
	libmdtools/typeref/cache_int.h \
	libmdtools/typeref/cache.c \
	libmdtools/typeref/bind_int.h \
	libmdtools/typeref/bind.c \
	libmdtools/typeref/engine_int.h \
	libmdtools/typeref/engine.c \
	libmdtools/typeref/dispatch_int.h \
	libmdtools/typeref/dispatch.c \
	libmdtools/typeref/resolve.c \
	libmdtools/typeref/memberref.c \
	libmdtools/typeref/sigeq_int.h \
	libmdtools/typeref/sigeq.c \
	libmdtools/typeref/derived.c \
	libmdtools/generics/decode.c \
	libmdtools/generics/sigblob.c \
	libmdtools/generics/sigtext.c \
	libmdtools/generics/fmt_int.h \
	libmdtools/generics/opts_int.h \
	libmdtools/generics/ilasm.c \
	libmdtools/generics/marshal.c \
	libmdtools/generics/typenames.c \
	libmdtools/generics/typetree.c \
	libmdtools/generics/members.c \
	libmdtools/generics/names.c \
	libmdtools/generics/prefetch.c \
	libmdtools/generics/metaname.c \
	libmdtools/generics/gparams.c \
	libmdtools/generics/gen_int.h \
	libmdtools/generics/bump_int.h \
	libmdtools/generics/value.c \
	libmdtools/generics/value_num.c \
	libmdtools/generics/constant.c \
	libmdtools/generics/attr.c \
	libmdtools/generics/attr_types.c \
	libmdtools/generics/attr_int.h \
	libmdtools/generics/desc_int.h \
	libmdtools/generics/descriptor.c \
	libmdtools/generics/desc_text.c \
	libmdtools/generics/idnames.c \
	libmdtools/pdb/pdb_int.h \
	libmdtools/pdb/open.c \
	libmdtools/pdb/seqpoints.c \
	libmdtools/pdb/document.c \
	libmdtools/il/il_int.h \
	libmdtools/il/body.c \
	libmdtools/il/decode.c \
	libmdtools/il/text.c \
	libmdtools/pe/pe_int.h \
	libmdtools/pe/headers.c \
	libmdtools/pe/debugdata.c \
	libmdtools/pe/r2r.c \
	libmdtools/pe/r2rdebug.c \
	libmdtools/pe/native.c \
	libmdtools/pe/r2rmethods.c \
	libmdtools/pe/win32res.c \
	libmdtools/pe/version.c \
	libmdtools/strongname/sn_int.h \
	libmdtools/strongname/keyblob.c \
	libmdtools/strongname/hash.c \
	libmdtools/strongname/rsa.c \
	libmdtools/strongname/verify.c \
	libmdtools/resources/manifest.c \
	libmdtools/resources/resset.c

noinst_LTLIBRARIES += libmdtools/libmdtools_core.la
libmdtools_libmdtools_core_la_SOURCES = $(MDT_LIB_SOURCES)
libmdtools_libmdtools_core_la_CPPFLAGS = $(MDT_CPPFLAGS)
libmdtools_libmdtools_core_la_CFLAGS = $(MDT_WARN_CFLAGS) $(TALLOC_CFLAGS) $(NETTLE_CFLAGS) $(ZLIB_CFLAGS)

libmdtools_libmdtools_la_SOURCES =
libmdtools_libmdtools_la_LIBADD = libmdtools/libmdtools_core.la \
	$(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS) $(ZLIB_LIBS)
libmdtools_libmdtools_la_LDFLAGS = -version-info $(MDT_LT_VERSION) $(MDT_SO_LDFLAGS) \
	-export-symbols-regex '^mdt_[a-z]'
EXTRA_DIST += doc/webcil.md doc/layers.md libmdtools/il/README.md

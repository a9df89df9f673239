# mdinspect: build and test rules (included from Makefile.am).
# The inspector uses only the public headers <mdtools/...>: no -I into the
# library's private folders beyond what MDT_CPPFLAGS gives everyone.
# A new command is mdinspect/cmd_NAME.c, one line in mdinspect/commands.def
# and one line below.
bin_PROGRAMS += mdinspect/mdinspect

# What the shell and batch share: one UTF-8 decoder, one way of writing
# JSON (common/json.h), one hex writer (common/hex.h) and the name options
# both use (common/naming.h), built into every program that has either.
MDI_COMMON_SOURCES = \
	mdinspect/common/utf8.h \
	mdinspect/common/utf8.c \
	mdinspect/common/json.h \
	mdinspect/common/json.c \
	mdinspect/common/hex.h \
	mdinspect/common/naming.h

# The shell: everything but main() and batch, also built into the fuzz
# harnesses of its parser and type-name lookup (tests/fuzz/local.mk).
MDI_SHELL_SOURCES = \
	mdinspect/repl.h \
	mdinspect/repl.c \
	mdinspect/complete.c \
	mdinspect/state.h \
	mdinspect/state.c \
	mdinspect/index.h \
	mdinspect/index.c \
	mdinspect/args.c \
	mdinspect/cmd.h \
	mdinspect/commands.def \
	mdinspect/cmds.c \
	mdinspect/match.c \
	mdinspect/help.c \
	mdinspect/cands.h \
	mdinspect/cands.c \
	mdinspect/rows.c \
	mdinspect/parts.c \
	mdinspect/parse.c \
	mdinspect/print.h \
	mdinspect/print_int.h \
	mdinspect/print.c \
	mdinspect/print_values.c \
	mdinspect/print_text.c \
	mdinspect/print_table.c \
	mdinspect/print_json.c \
	mdinspect/flags.c \
	mdinspect/names.c \
	mdinspect/decl.c \
	mdinspect/opening.h \
	mdinspect/opening.c \
	mdinspect/resolve.h \
	mdinspect/resolve.c \
	mdinspect/cmd_attrs.c \
	mdinspect/cmd_close.c \
	mdinspect/cmd_constants.c \
	mdinspect/cmd_derived.c \
	mdinspect/cmd_dump.c \
	mdinspect/cmd_exported.c \
	mdinspect/cmd_find.c \
	mdinspect/cmd_heap.c \
	mdinspect/cmd_help.c \
	mdinspect/cmd_il.c mdinspect/il_text.h mdinspect/il_text.c mdinspect/ilasm.h mdinspect/ilasm_module.c \
	mdinspect/ilasm_put.c mdinspect/ilasm_members.c \
	mdinspect/cmd_info.c \
	mdinspect/cmd_inst.c \
	mdinspect/cmd_memberrefs.c \
	mdinspect/cmd_modules.c \
	mdinspect/cmd_open.c \
	mdinspect/cmd_pe.c \
	mdinspect/snkeys.h \
	mdinspect/snkeys.c \
	mdinspect/cmd_quit.c \
	mdinspect/cmd_refs.c \
	mdinspect/cmd_resolve.c \
	mdinspect/cmd_set.c \
	mdinspect/cmd_sig.c \
	mdinspect/cmd_sn.c \
	mdinspect/cmd_resources.c \
	mdinspect/cmd_streams.c \
	mdinspect/cmd_strings.c \
	mdinspect/cmd_tables.c \
	mdinspect/cmd_token.c \
	mdinspect/cmd_type.c \
	mdinspect/cmd_typerefs.c \
	mdinspect/cmd_types.c \
	mdinspect/cmd_unresolved.c \
	mdinspect/cmd_use.c \
	mdinspect/cmd_validate.c

mdinspect_mdinspect_SOURCES = \
	mdinspect/main.c \
	$(MDI_COMMON_SOURCES) \
	$(MDI_SHELL_SOURCES) \
	mdinspect/batch/main.c \
	$(MDB_BATCH_SOURCES)

# The batch tool's files but main.c: the fuzz harnesses of tests/batch build
# them in too.
MDB_BATCH_SOURCES = \
	mdinspect/batch/batch.h \
	mdinspect/batch/table.h \
	mdinspect/batch/io.h \
	mdinspect/batch/files.h \
	mdinspect/batch/assemblies.h \
	mdinspect/batch/parse.h \
	mdinspect/batch/plain.h \
	mdinspect/batch/lines.h \
	mdinspect/batch/table.c \
	mdinspect/batch/io.c \
	mdinspect/batch/files.c \
	mdinspect/batch/assemblies_int.h \
	mdinspect/batch/assemblies.c \
	mdinspect/batch/assemblies_index.c \
	mdinspect/batch/modcache.c \
	mdinspect/batch/resolve_int.h \
	mdinspect/batch/resolve.c \
	mdinspect/batch/resolve_make.c \
	mdinspect/batch/resolve_lines.c \
	mdinspect/batch/resolve_json.c \
	mdinspect/batch/ilinsn.c \
	mdinspect/batch/record.c \
	mdinspect/batch/logctx_int.h \
	mdinspect/batch/logctx.c \
	mdinspect/batch/logctx_header.c \
	mdinspect/batch/emit_text.c \
	mdinspect/batch/emit_json.c \
	mdinspect/batch/emit_folded.c \
	mdinspect/batch/aggregate.c \
	mdinspect/batch/aggregate_int.h \
	mdinspect/batch/agg_speedscope.c \
	mdinspect/batch/agg_top.c \
	mdinspect/batch/filter.c \
	mdinspect/batch/progress.c \
	mdinspect/batch/run.c \
	mdinspect/batch/native.h \
	mdinspect/batch/native.c \
	mdinspect/batch/elfsyms.c \
	mdinspect/batch/pprof.c mdinspect/batch/pprof_write.c mdinspect/batch/pprof_int.h

# --pprof's encoder, generated from the format's .proto by protoc-c
# (configure.ac: protobuf-c, the library it writes through).
MDB_BATCH_GENERATED = mdinspect/batch/profile.pb-c.c mdinspect/batch/profile.pb-c.h
BUILT_SOURCES += $(MDB_BATCH_GENERATED)
CLEANFILES += $(MDB_BATCH_GENERATED)
EXTRA_DIST += mdinspect/batch/profile.proto
# One run makes both files: the header waits for the .c (parallel makes).
mdinspect/batch/profile.pb-c.c: $(top_srcdir)/mdinspect/batch/profile.proto
	$(AM_V_GEN)$(MKDIR_P) mdinspect/batch && \
	$(PROTOC_C) --c_out=$(top_builddir) --proto_path=$(top_srcdir) \
		$(top_srcdir)/mdinspect/batch/profile.proto
mdinspect/batch/profile.pb-c.h: mdinspect/batch/profile.pb-c.c
	@:
nodist_mdinspect_mdinspect_SOURCES = $(MDB_BATCH_GENERATED)

mdinspect_mdinspect_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/mdinspect $(TALLOC_CFLAGS) \
	$(XXHASH_CFLAGS) $(LIBDW_CFLAGS) $(PROTOBUF_C_CFLAGS) $(ZLIB_CFLAGS)
mdinspect_mdinspect_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
mdinspect_mdinspect_LDFLAGS = $(AX_PTHREAD_CFLAGS)
mdinspect_mdinspect_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS) $(READLINE_LIBS) \
	$(XXHASH_LIBS) $(LIBDW_LIBS) $(PROTOBUF_C_LIBS) $(ZLIB_LIBS)

dist_man_MANS += doc/mdinspect.1
# How the shell is put together: its units, bottom up.
EXTRA_DIST += mdinspect/README.md

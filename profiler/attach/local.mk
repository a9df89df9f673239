# mdprofile's attach client (issue 14): the CoreCLR diagnostics IPC over a
# Unix socket, as a libtool convenience library the mdprofile command links
# (with $(TALLOC_LIBS)). Its tests live in tests/attach/. See doc/attach.md.
noinst_LTLIBRARIES += profiler/attach/libmdpattach.la
profiler_attach_libmdpattach_la_SOURCES = \
	profiler/attach/ipc.h \
	profiler/attach/ipc_int.h \
	profiler/attach/ipc.c \
	profiler/attach/wire.c \
	profiler/attach/utf16.c \
	profiler/attach/transport.c \
	profiler/attach/discover.c \
	profiler/attach/hresult.c
# -I profiler: core/hex.h (header only: the digit reader)
profiler_attach_libmdpattach_la_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler
profiler_attach_libmdpattach_la_CFLAGS = $(MDT_WARN_CFLAGS) $(TALLOC_CFLAGS)
profiler_attach_libmdpattach_la_LIBADD = $(TALLOC_LIBS)
EXTRA_DIST += doc/attach.md

include tests/attach/local.mk

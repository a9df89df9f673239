# mdinspect: build and test rules (included from Makefile.am).
# The inspector uses only the public headers <mdtools/...>: no -I into the
# library's private folders beyond what MDT_CPPFLAGS gives everyone.
bin_PROGRAMS += mdinspect/mdinspect

mdinspect_mdinspect_SOURCES = \
	mdinspect/main.c \
	mdinspect/state.h \
	mdinspect/state.c \
	mdinspect/cmd.h \
	mdinspect/cmds.c \
	mdinspect/print.h \
	mdinspect/print.c \
	mdinspect/cmd_dump.c \
	mdinspect/cmd_help.c \
	mdinspect/cmd_info.c \
	mdinspect/cmd_streams.c \
	mdinspect/cmd_strings.c \
	mdinspect/cmd_tables.c

mdinspect_mdinspect_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS) $(JANSSON_CFLAGS)
mdinspect_mdinspect_CFLAGS = $(MDT_WARN_CFLAGS)
mdinspect_mdinspect_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS) $(JANSSON_LIBS)

dist_man_MANS += doc/mdinspect.1

# tests/diff: libmdtools against monodis over the installed Mono 4.5
# framework (tests/diff/README.md). Included from Makefile.am.
check_PROGRAMS += tests/diff/mddump
tests_diff_mddump_SOURCES = tests/diff/mddump.c
tests_diff_mddump_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)
tests_diff_mddump_CFLAGS = $(MDT_WARN_CFLAGS)
tests_diff_mddump_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

TESTS += tests/diff/run-monodis-diff.sh
EXTRA_DIST += tests/diff/run-monodis-diff.sh tests/diff/monodis-diff.py tests/diff/README.md

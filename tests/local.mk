# Tests. Unit tests use Check (one program per area, tests/unit/test_<area>.c);
# tests/summary.sh turns the results into the closing "N passed, N failed".
AM_TESTS_ENVIRONMENT = MDT_TOP_SRCDIR='$(abs_top_srcdir)'; export MDT_TOP_SRCDIR; \
	MDT_BUILDDIR='$(abs_top_builddir)'; export MDT_BUILDDIR; \
	CK_DEFAULT_TIMEOUT=120; export CK_DEFAULT_TIMEOUT;

# What every script test shares: its PASS/FAIL lines, closing line and
# exit status (tests/common/check.sh for shell, mdtcheck.py for Python).
EXTRA_DIST += tests/common/check.sh tests/common/mdtcheck.py

# Helpers shared by tests, fuzz harnesses and benchmarks.
noinst_LTLIBRARIES += tests/common/libtestcommon.la
tests_common_libtestcommon_la_SOURCES = tests/common/walk.c tests/common/walk.h \
	tests/common/paths.h tests/common/padded.h tests/common/bootalloc.h \
	tests/common/layout.c tests/common/layout.h tests/common/imgcmp.c tests/common/imgcmp.h \
	tests/common/rowruns.c tests/common/rowruns.h tests/common/framework.h
tests_common_libtestcommon_la_CPPFLAGS = $(MDT_CPPFLAGS) $(TALLOC_CFLAGS)

TEST_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common $(TALLOC_CFLAGS) $(CHECK_CFLAGS)
TEST_LDADD = tests/common/libtestcommon.la libmdtools/libmdtools.la $(TALLOC_LIBS) $(CHECK_LIBS)
TEST_MAIN = tests/common/check_main.c

if HAVE_CHECK
UNIT_TESTS = tests/unit/test_image tests/unit/test_sig tests/unit/test_fixtures \
	tests/unit/test_idnames
UNIT_TESTS += tests/unit/test_webcil tests/unit/test_bundle tests/unit/test_pdb tests/unit/test_rows tests/unit/test_owner \
	tests/unit/test_members \
	tests/unit/test_rows_framework \
	tests/unit/test_batch_parse tests/unit/test_batch_parse_swar tests/unit/test_batch_json
UNIT_TESTS += tests/unit/test_mapped tests/unit/test_mapped_r2r tests/unit/test_r2r_debug tests/unit/test_r2r_methods tests/unit/test_strbuf \
	tests/unit/test_errors tests/unit/test_file tests/unit/test_marshal tests/unit/test_api
check_PROGRAMS += $(UNIT_TESTS)
TESTS += $(UNIT_TESTS)

tests_unit_test_image_SOURCES = tests/unit/test_image.c $(TEST_MAIN)
tests_unit_test_image_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_image_LDADD = $(TEST_LDADD)

tests_unit_test_file_SOURCES = tests/unit/test_file.c $(TEST_MAIN)
tests_unit_test_file_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_file_LDADD = $(TEST_LDADD)

tests_unit_test_marshal_SOURCES = tests/unit/test_marshal.c $(TEST_MAIN)
tests_unit_test_marshal_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_marshal_LDADD = $(TEST_LDADD)

# A program written with the old names of 1:0:0 (deprecated aliases), and
# the check that a compiler names their new functions.
check_PROGRAMS += tests/unit/old_names
TESTS += tests/unit/old_names tests/unit/old_names.sh
EXTRA_DIST += tests/unit/old_names.sh
tests_unit_old_names_SOURCES = tests/unit/old_names.c
tests_unit_old_names_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common $(TALLOC_CFLAGS)
tests_unit_old_names_CFLAGS = $(MDT_WARN_CFLAGS) -Wno-deprecated-declarations
tests_unit_old_names_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)

tests_unit_test_api_SOURCES = tests/unit/test_api.c $(TEST_MAIN)
tests_unit_test_api_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_api_LDADD = $(TEST_LDADD)

tests_unit_test_errors_SOURCES = tests/unit/test_errors.c $(TEST_MAIN)
tests_unit_test_errors_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_errors_LDADD = $(TEST_LDADD)

tests_unit_test_sig_SOURCES = tests/unit/test_sig.c $(TEST_MAIN)
tests_unit_test_sig_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_sig_LDADD = $(TEST_LDADD)

tests_unit_test_batch_parse_SOURCES = tests/unit/test_batch_parse.c $(TEST_MAIN)
tests_unit_test_batch_parse_CPPFLAGS = $(TEST_CPPFLAGS) -I$(top_srcdir)/mdinspect
tests_unit_test_batch_parse_LDADD = $(TEST_LDADD)

tests_unit_test_batch_parse_swar_SOURCES = tests/unit/test_batch_parse.c $(TEST_MAIN)
tests_unit_test_batch_parse_swar_CPPFLAGS = $(TEST_CPPFLAGS) -I$(top_srcdir)/mdinspect -DMDB_NO_SSE2
tests_unit_test_batch_parse_swar_LDADD = $(TEST_LDADD)

# mdinspect's JSON writer (common/json.c) through batch's output buffer
# (io.c), its numbers checked against jansson's.
tests_unit_test_batch_json_SOURCES = tests/unit/test_batch_json.c mdinspect/batch/io.c \
	$(MDI_COMMON_SOURCES) $(TEST_MAIN)
tests_unit_test_batch_json_CPPFLAGS = $(TEST_CPPFLAGS) -I$(top_srcdir)/mdinspect $(JANSSON_CFLAGS)
tests_unit_test_batch_json_LDADD = $(TEST_LDADD) $(JANSSON_LIBS)

tests_unit_test_members_SOURCES = tests/unit/test_members.c $(TEST_MAIN)
tests_unit_test_members_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_members_LDADD = $(TEST_LDADD)

tests_unit_test_owner_SOURCES = tests/unit/test_owner.c $(TEST_MAIN)
tests_unit_test_owner_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_owner_LDADD = $(TEST_LDADD)

# The string builder, built in with its sources (its functions are not
# exported); the test stands in for the error record.
tests_unit_test_strbuf_SOURCES = tests/unit/test_strbuf.c libmdtools/util/strbuf.c $(TEST_MAIN)
tests_unit_test_strbuf_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_strbuf_LDADD = $(TALLOC_LIBS) $(CHECK_LIBS)

tests_unit_test_fixtures_SOURCES = tests/unit/test_fixtures.c $(TEST_MAIN)
tests_unit_test_fixtures_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_fixtures_LDADD = $(TEST_LDADD)

tests_unit_test_idnames_SOURCES = tests/unit/test_idnames.c $(TEST_MAIN)
tests_unit_test_idnames_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_idnames_LDADD = $(TEST_LDADD)

tests_unit_test_webcil_SOURCES = tests/unit/test_webcil.c $(TEST_MAIN)
tests_unit_test_webcil_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_webcil_LDADD = $(TEST_LDADD)
tests_unit_test_bundle_SOURCES = tests/unit/test_bundle.c $(TEST_MAIN)
tests_unit_test_bundle_CPPFLAGS = $(TEST_CPPFLAGS) $(ZLIB_CFLAGS)
tests_unit_test_bundle_LDADD = $(TEST_LDADD) $(ZLIB_LIBS)

tests_unit_test_pdb_SOURCES = tests/unit/test_pdb.c $(TEST_MAIN)
tests_unit_test_pdb_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_pdb_LDADD = $(TEST_LDADD)

tests_unit_test_rows_SOURCES = tests/unit/test_rows.c $(TEST_MAIN)
tests_unit_test_rows_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_rows_LDADD = $(TEST_LDADD)

tests_unit_test_rows_framework_SOURCES = tests/unit/test_rows_framework.c $(TEST_MAIN)
tests_unit_test_rows_framework_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_rows_framework_LDADD = $(TEST_LDADD)

tests_unit_test_mapped_SOURCES = tests/unit/test_mapped.c $(TEST_MAIN)
tests_unit_test_mapped_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_mapped_LDADD = $(TEST_LDADD)

# Needs the .NET shared framework (exits 77 without it); its own main().
tests_unit_test_mapped_r2r_SOURCES = tests/unit/test_mapped_r2r.c
tests_unit_test_mapped_r2r_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_mapped_r2r_LDADD = $(TEST_LDADD)

# The IL-to-native maps of ReadyToRun code over the shared framework (exits
# 77 without it); its own main().
tests_unit_test_r2r_debug_SOURCES = tests/unit/test_r2r_debug.c
tests_unit_test_r2r_debug_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_r2r_debug_LDADD = $(TEST_LDADD)
tests_unit_test_r2r_methods_SOURCES = tests/unit/test_r2r_methods.c
tests_unit_test_r2r_methods_CPPFLAGS = $(TEST_CPPFLAGS)
tests_unit_test_r2r_methods_LDADD = $(TEST_LDADD)
endif

# Threads racing through the checks open leaves to first need (md/lazy.c);
# run-lazy-tsan.sh builds it and the library with ThreadSanitizer.
check_PROGRAMS += tests/unit/lazy_threads
TESTS += tests/unit/lazy_threads tests/unit/run-lazy-tsan.sh
tests_unit_lazy_threads_SOURCES = tests/unit/lazy_threads.c
tests_unit_lazy_threads_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common $(TALLOC_CFLAGS)
tests_unit_lazy_threads_CFLAGS = $(AX_PTHREAD_CFLAGS)
tests_unit_lazy_threads_LDFLAGS = $(AX_PTHREAD_CFLAGS)
tests_unit_lazy_threads_LDADD = libmdtools/libmdtools.la $(TALLOC_LIBS)
EXTRA_DIST += tests/unit/run-lazy-tsan.sh

# Every public header compiles alone as strict C11.
TESTS += tests/headers.sh
# The library's folders use each other bottom up: the includes of its
# files and the calls between its built objects (tools/check-layers.sh).
TESTS += tools/check-layers.sh
EXTRA_DIST += tools/check-layers.sh
# The cycles of the call graph per folder, for people (issue 29's figures).
EXTRA_DIST += tools/callgraph.py
# Every C file is laid out as .clang-format says (clang-format 14).
TESTS += tools/check-format.sh
EXTRA_DIST += tools/check-format.sh .clang-format
# Every MDT_E... code a public function can return is listed in its header
# comment (the codes worked out from the sources through clang's AST).
TESTS += tests/errcodes.py
EXTRA_DIST += tests/errcodes.py
EXTRA_DIST += tests/summary.sh tests/headers.sh tests/valgrind.sh

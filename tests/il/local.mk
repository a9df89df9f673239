# tests/il: method bodies and instructions (<mdtools/il.h>, issue 26).
# Included from Makefile.am. The fixture tests/il/data/Opcodes.dll is
# rebuilt by tests/il/data/build.sh (Mono's ilasm).
if HAVE_CHECK
check_PROGRAMS += tests/il/test_il
TESTS += tests/il/test_il
tests_il_test_il_SOURCES = tests/il/test_il.c $(TEST_MAIN)
tests_il_test_il_CPPFLAGS = $(TEST_CPPFLAGS)
tests_il_test_il_LDADD = $(TEST_LDADD)
endif
EXTRA_DIST += tests/il/data/Opcodes.il tests/il/data/Opcodes.dll tests/il/data/build.sh

# tests/corrupt: build and test rules (included from Makefile.am).
# Malformed inputs: cases/*.bin made by make-cases.py, expectations in
# cases.tsv, one Check test per case (see tests/corrupt/README.md).
if HAVE_CHECK
check_PROGRAMS += tests/corrupt/test_corrupt
TESTS += tests/corrupt/test_corrupt

tests_corrupt_test_corrupt_SOURCES = tests/corrupt/test_corrupt.c $(TEST_MAIN)
tests_corrupt_test_corrupt_CPPFLAGS = $(TEST_CPPFLAGS)
tests_corrupt_test_corrupt_LDADD = $(TEST_LDADD)
endif

# The cases/ directory goes whole (its *.bin files).
EXTRA_DIST += tests/corrupt/README.md tests/corrupt/make-cases.py tests/corrupt/cases.tsv \
	tests/corrupt/cases

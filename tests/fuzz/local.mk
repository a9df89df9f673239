# tests/fuzz: build and test rules (included from Makefile.am).
#
# Each libFuzzer harness also builds, with any compiler, as a plain replayer
# of its seed corpus (replay.c supplies main(); -DREPLAY_DEFAULT_CORPUS names
# the corpus under the source tree), and `make check` runs it: a crash fails
# the test. With --enable-fuzzing (configure with CC=clang) the real fuzzer
# is built too, the library compiled into it under the same sanitizer and
# coverage flags. See tests/fuzz/README.md.

# Harnesses for `make fuzz`, PROGRAM=CORPUSDIR each (areas add theirs with +=).
FUZZ_RUNS =

check_PROGRAMS += tests/fuzz/fuzz_image_replay
TESTS += tests/fuzz/fuzz_image_replay
# Every replayer finds its inputs run from / without MDT_TOP_SRCDIR.
TESTS += tests/fuzz/standalone.sh
EXTRA_DIST += tests/fuzz/standalone.sh

tests_fuzz_fuzz_image_replay_SOURCES = tests/fuzz/replay.c tests/fuzz/fuzz_image.c
tests_fuzz_fuzz_image_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) -DREPLAY_DEFAULT_CORPUS='"tests/fuzz/corpus/image"'
tests_fuzz_fuzz_image_replay_CFLAGS = $(MDT_WARN_CFLAGS)
tests_fuzz_fuzz_image_replay_LDADD = tests/common/libtestcommon.la libmdtools/libmdtools.la \
	$(TALLOC_LIBS)

# Flags of every libFuzzer target (other areas' harnesses use them too).
MDT_FUZZ_CFLAGS = -g -O1 -fno-omit-frame-pointer -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined

if ENABLE_FUZZING
noinst_PROGRAMS += tests/fuzz/fuzz_image
tests_fuzz_fuzz_image_SOURCES = tests/fuzz/fuzz_image.c tests/common/walk.c tests/common/layout.c \
	tests/common/rowruns.c \
	$(libmdtools_libmdtools_la_SOURCES)
tests_fuzz_fuzz_image_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/tests/common \
	$(TALLOC_CFLAGS) $(NETTLE_CFLAGS)
tests_fuzz_fuzz_image_CFLAGS = $(MDT_FUZZ_CFLAGS)
tests_fuzz_fuzz_image_LDADD = $(TALLOC_LIBS) $(NETTLE_LIBS) $(GMP_LIBS)
endif

EXTRA_DIST += tests/fuzz/README.md tests/fuzz/image.dict tests/fuzz/corpus/image

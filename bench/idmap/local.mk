# Benchmark of the runtime-ID maps against a flat hash table and a
# pthread_rwlock-protected one; results in bench/idmap/README.md.
# Built with `make`, run by hand:
# bench/idmap/bench_idmap [entries] [ranges] [seconds] [runs] [conc]
noinst_PROGRAMS += bench/idmap/bench_idmap
bench_idmap_bench_idmap_SOURCES = bench/idmap/bench_idmap.c
bench_idmap_bench_idmap_CPPFLAGS = $(MDT_CPPFLAGS)
bench_idmap_bench_idmap_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
bench_idmap_bench_idmap_LDADD = libmdtools/libmdtools.la $(AX_PTHREAD_CFLAGS)
EXTRA_DIST += bench/idmap/README.md bench/idmap/replay.sh bench/idmap/coldlines.sh

# What code tombstones cost under churn (issue 30), run by hand:
# bench/idmap/bench_tombs [cycles]
noinst_PROGRAMS += bench/idmap/bench_tombs
bench_idmap_bench_tombs_SOURCES = bench/idmap/bench_tombs.c
bench_idmap_bench_tombs_CPPFLAGS = $(MDT_CPPFLAGS)
bench_idmap_bench_tombs_CFLAGS = $(MDT_WARN_CFLAGS)
bench_idmap_bench_tombs_LDADD = libmdtools/libmdtools.la

# Replay of the writer calls a real process made (issue 24), recorded by a
# build with -DMDT_IDMAP_RECORD; run by hand: bench/idmap/bench_replay
# [-n runs] [-s] [-f flags] trace (bench/idmap/replay.sh compares two builds)
noinst_PROGRAMS += bench/idmap/bench_replay
bench_idmap_bench_replay_SOURCES = bench/idmap/bench_replay.c
bench_idmap_bench_replay_CPPFLAGS = $(MDT_CPPFLAGS)
bench_idmap_bench_replay_CFLAGS = $(MDT_WARN_CFLAGS)
bench_idmap_bench_replay_LDADD = libmdtools/libmdtools.la

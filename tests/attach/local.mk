# Tests of the attach client (profiler/attach): wire format and fake
# servers (test_ipc, Check), and runs against real dotnet processes (scripts;
# exit 77 with the reason when dotnet or another needed tool is absent).
# ipcclient drives the client from the command line. See tests/attach/README.md.
noinst_PROGRAMS += tests/attach/ipcclient
tests_attach_ipcclient_SOURCES = tests/attach/ipcclient.c
tests_attach_ipcclient_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler/attach
tests_attach_ipcclient_CFLAGS = $(MDT_WARN_CFLAGS)
tests_attach_ipcclient_LDADD = profiler/attach/libmdpattach.la $(TALLOC_LIBS)

if HAVE_CHECK
check_PROGRAMS += tests/attach/test_ipc
TESTS += tests/attach/test_ipc
tests_attach_test_ipc_SOURCES = tests/attach/test_ipc.c $(TEST_MAIN)
tests_attach_test_ipc_CPPFLAGS = $(TEST_CPPFLAGS) -I$(top_srcdir)/profiler/attach
tests_attach_test_ipc_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_attach_test_ipc_LDADD = profiler/attach/libmdpattach.la $(TALLOC_LIBS) $(CHECK_LIBS) \
	$(AX_PTHREAD_CFLAGS)
endif

TESTS += tests/attach/run-dotnet.sh tests/attach/run-otheruser.sh tests/attach/run-container.sh
EXTRA_DIST += tests/attach/README.md tests/attach/run-dotnet.sh tests/attach/run-otheruser.sh \
	tests/attach/run-container.sh tests/attach/common.sh tests/attach/testprof.c \
	data/attach/README.md data/attach/Waiter/Waiter.csproj data/attach/Waiter/Program.cs

# The IPC client's handling of replies, fed as if from a socket (issue 25):
# a libFuzzer harness, its replayer in make check, its seed corpus
# (written by ipcreply-seeds.py) and the reproducers of its findings.
check_PROGRAMS += tests/attach/fuzz_ipcreply_replay
TESTS += tests/attach/fuzz_ipcreply_replay
tests_attach_fuzz_ipcreply_replay_SOURCES = tests/fuzz/replay.c tests/attach/fuzz_ipcreply.c
tests_attach_fuzz_ipcreply_replay_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler/attach \
	-I$(top_srcdir)/tests/common -DREPLAY_DEFAULT_CORPUS='"tests/attach/corpus/ipcreply"'
tests_attach_fuzz_ipcreply_replay_CFLAGS = $(MDT_WARN_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_attach_fuzz_ipcreply_replay_LDADD = profiler/attach/libmdpattach.la $(TALLOC_LIBS) \
	$(AX_PTHREAD_CFLAGS)
if ENABLE_FUZZING
noinst_PROGRAMS += tests/attach/fuzz_ipcreply
tests_attach_fuzz_ipcreply_SOURCES = tests/attach/fuzz_ipcreply.c $(profiler_attach_libmdpattach_la_SOURCES)
tests_attach_fuzz_ipcreply_CPPFLAGS = $(MDT_CPPFLAGS) -I$(top_srcdir)/profiler/attach $(TALLOC_CFLAGS)
tests_attach_fuzz_ipcreply_CFLAGS = $(MDT_FUZZ_CFLAGS) $(AX_PTHREAD_CFLAGS)
tests_attach_fuzz_ipcreply_LDADD = $(TALLOC_LIBS) $(AX_PTHREAD_CFLAGS)
endif
FUZZ_RUNS += tests/attach/fuzz_ipcreply=tests/attach/corpus/ipcreply
EXTRA_DIST += tests/attach/fuzz_ipcreply.c tests/attach/ipcreply-seeds.py tests/attach/corpus

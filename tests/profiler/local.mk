# The profiler's tests (issue 14). The runtime tests need dotnet: without it
# they exit 77 and say why. See tests/profiler/README.md.
TESTS += tests/profiler/names.sh tests/profiler/plugins.sh
EXTRA_DIST += tests/profiler/README.md tests/profiler/common.sh tests/profiler/check.py \
	tests/profiler/names.sh tests/profiler/plugins.sh data/profiler

#!/bin/sh
# Issue 28, branch batchio: does writing batch's output to a regular file
# from several threads at known offsets (pwrite) beat one thread writing
# it in order? N threads each pwrite every Nth block of 78 KiB (a 64 KiB
# range's names) to one file, 600 MB in all, against one thread writing
# every block in turn; the file is truncated before each run. Prints the
# wall time and the CPU time (user + system) of each run, taking turns.
#
#   bench/batch/pwrite.sh [FILE] [ROUNDS]     (FILE on the file system to test)
set -u
file=${1:-${TMPDIR:-/tmp}/pwrite-bench.out}
rounds=${2:-5}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pwrite.XXXXXX") || exit 1
trap 'rm -rf "$tmp" "$file"' EXIT INT TERM
cat >"$tmp/pw.c" <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#define BLOCK (78u * 1024)
#define TOTAL (600ull << 20)
static int fd;
static unsigned nthreads;
static void *run(void *arg)
{
    unsigned k = (unsigned)(size_t)arg;
    char *buf = malloc(BLOCK);
    memset(buf, 'a' + (int)k, BLOCK);
    for (unsigned long long off = (unsigned long long)k * BLOCK; off < TOTAL;
         off += (unsigned long long)nthreads * BLOCK)
        if (pwrite(fd, buf, BLOCK, (off_t)off) != (ssize_t)BLOCK)
            abort();
    free(buf);
    return NULL;
}
int main(int argc, char **argv)
{
    pthread_t t[64];
    struct timespec a, b;
    struct rusage ru;
    nthreads = (unsigned)atoi(argv[2]);
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (unsigned i = 0; i < nthreads; i++)
        pthread_create(&t[i], NULL, run, (void *)(size_t)i);
    for (unsigned i = 0; i < nthreads; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &ru);
    printf("%u threads: wall %.3f s, user %.3f s, system %.3f s\n", nthreads,
           (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    return 0;
}
C
${CC:-cc} -O2 -pthread -o "$tmp/pw" "$tmp/pw.c" || exit 1
r=1
while [ "$r" -le "$rounds" ]; do
    for n in 1 2; do
        "$tmp/pw" "$file" $n
    done
    r=$((r + 1))
done

#!/bin/sh
# Issue 28, branch batchio: reading a regular file's 64 KiB ranges with
# pread into a buffer against mapping it and reading in place, N threads
# taking interleaved ranges, a memchr for '#' over each range (as batch's
# workers do). Prints wall, user and system time of each run, taking turns.
#
#   bench/batch/mapread.sh FILE [THREADS] [ROUNDS]
set -u
file=${1:?FILE}
threads=${2:-2}
rounds=${3:-3}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mapread.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/mm.c" <<'C'
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define R (64u * 1024)
static int fd, mode;
static unsigned n;
static size_t size;
static const char *map;
static volatile size_t sink;
static void *run(void *arg)
{
    unsigned k = (unsigned)(size_t)arg;
    char *buf = malloc(R + 1024);
    size_t c = 0;
    for (size_t off = (size_t)k * R; off < size; off += (size_t)n * R) {
        size_t len = size - off < R ? size - off : R;
        const char *p;
        if (mode) {
            p = map + off;
        } else {
            if (pread(fd, buf, len, (off_t)off) != (ssize_t)len)
                abort();
            p = buf;
        }
        c += memchr(p, '#', len) != NULL;
        c += (unsigned char)p[len / 2];
    }
    sink += c;
    free(buf);
    return NULL;
}
int main(int argc, char **argv)
{
    pthread_t t[64];
    struct timespec a, b;
    struct rusage ru;
    struct stat st;
    mode = strcmp(argv[2], "mmap") == 0;
    n = (unsigned)atoi(argv[3]);
    fd = open(argv[1], O_RDONLY);
    fstat(fd, &st);
    size = (size_t)st.st_size;
    clock_gettime(CLOCK_MONOTONIC, &a);
    if (mode)
        map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    for (unsigned i = 0; i < n; i++)
        pthread_create(&t[i], NULL, run, (void *)(size_t)i);
    for (unsigned i = 0; i < n; i++)
        pthread_join(t[i], NULL);
    if (mode)
        munmap((void *)map, size);
    clock_gettime(CLOCK_MONOTONIC, &b);
    getrusage(RUSAGE_SELF, &ru);
    printf("%s %u: wall %.3f user %.3f system %.3f\n", argv[2], n,
           (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9,
           (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6);
    return 0;
}
C
${CC:-cc} -O2 -pthread -o "$tmp/mm" "$tmp/mm.c" || exit 1
r=1
while [ "$r" -le "$rounds" ]; do
    for m in pread mmap; do
        "$tmp/mm" "$file" $m "$threads"
    done
    r=$((r + 1))
done

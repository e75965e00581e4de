/*
 * What the benchmarks' NVSHMEM programs (nvshmem_floor.c, nvshmem_device.cu)
 * share as programs started by symmem's launcher: the launcher's variables
 * (SYMMEM_RANK, SYMMEM_NRANKS, SYMMEM_LOCAL_RANK, SYMMEM_JOB) and the
 * driver's, a clock, and the way NVSHMEM's unique id reaches every PE: PE 0
 * writes it to /dev/shm/<prefix>-<SYMMEM_JOB>-uid (under a temporary name,
 * then renamed, so nobody reads half of it); the other PEs poll for the file.
 * SYMMEM_JOB is new for every launch, so two runs never meet. Once NVSHMEM's
 * init has returned on PE 0 every PE has read the id, and PE 0 removes the
 * file. Plain C that C++ compiles too.
 */
#ifndef SYMMEM_BENCH_LAUNCHED_H
#define SYMMEM_BENCH_LAUNCHED_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define UID_FILE_WAIT_S 120 /* how long a PE waits for PE 0's file */

/* A variable's value as a number, or fallback where it is not set. */
static long env_long(const char *name, long fallback)
{
    const char *text = getenv(name);
    return text ? atol(text) : fallback;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void uid_file_path(char *path, size_t size, const char *prefix)
{
    const char *job = getenv("SYMMEM_JOB");
    snprintf(path, size, "/dev/shm/%s-%s-uid", prefix, job ? job : "no-job");
}

/* PE 0 writes the size bytes at uid; the others fill them from the file.
 * 0, or -1 with the reason on stderr. */
static int uid_file_share(const char *prefix, int rank, void *uid, size_t size)
{
    char path[512], tmp[600];
    uid_file_path(path, sizeof(path), prefix);
    if (rank == 0) {
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "wb");
        int ok = f != NULL && fwrite(uid, size, 1, f) == 1;
        if (f != NULL && fclose(f) != 0) ok = 0;
        if (!ok || rename(tmp, path) != 0) {
            fprintf(stderr, "PE 0: cannot write NVSHMEM's unique id to %s\n", path);
            unlink(tmp);
            return -1;
        }
        return 0;
    }
    for (long waited_ms = 0; waited_ms < UID_FILE_WAIT_S * 1000L; waited_ms++) {
        FILE *f = fopen(path, "rb");
        if (f != NULL) {
            size_t got = fread(uid, size, 1, f);
            fclose(f);
            if (got == 1) return 0;
        }
        usleep(1000);
    }
    fprintf(stderr, "PE %d: no unique id from PE 0 in %s after %d s\n", rank, path,
            UID_FILE_WAIT_S);
    return -1;
}

/* PE 0, after init: every PE has the id. */
static void uid_file_remove(const char *prefix)
{
    char path[512];
    uid_file_path(path, sizeof(path), prefix);
    unlink(path);
}

#endif

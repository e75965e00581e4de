/* The PTX cache (ptx_cache.h). Files are written whole under a temporary
 * name and renamed, so a reader (another PE compiling the same kernels at
 * the same time) sees a complete file or none. The folder must be this
 * user's and writable by nobody else, as what is in it runs on the GPU. */
#include "ptx_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A PTX module of symmem's is well under a megabyte; a bigger file is not ours. */
#define MAX_PTX_BYTES (64u << 20)

static uint64_t fnv1a(uint64_t h, const void *data, size_t size)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < size; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

uint64_t symmem__ptx_cache_key(const char *source, const char *name, const char *const *options,
                               int noptions, int nvrtc_major, int nvrtc_minor)
{
    /* each part with its terminating NUL, so "ab"+"c" differs from "a"+"bc" */
    uint64_t h = fnv1a(0xcbf29ce484222325ull, "symmem ptx 1", 13);
    int version[2] = {nvrtc_major, nvrtc_minor};
    h = fnv1a(h, version, sizeof(version));
    h = fnv1a(h, name, strlen(name) + 1);
    for (int i = 0; i < noptions; i++) h = fnv1a(h, options[i], strlen(options[i]) + 1);
    return fnv1a(h, source, strlen(source) + 1);
}

/* path and the folders above it, made (mode 0700) where missing. */
static int make_folders(char *path)
{
    for (char *slash = strchr(path + 1, '/');; slash = strchr(slash + 1, '/')) {
        if (slash != NULL) *slash = '\0';
        int made = mkdir(path, 0700) == 0 || errno == EEXIST;
        if (slash == NULL) return made ? 0 : -1;
        *slash = '/';
        if (!made) return -1;
    }
}

/* The cache folder into path, made where missing; -1 where the cache is off
 * (SYMMEM_KERNEL_CACHE empty or off: the Python package sets it) or the
 * folder is not safe to load code from. */
static int folder(const symmem_core_services_t *core, char *path, size_t size)
{
    const char *chosen = core->env_string("SYMMEM_KERNEL_CACHE");
    if (chosen[0] == '\0' || strcmp(chosen, "off") == 0) return -1;
    if ((size_t)snprintf(path, size, "%s", chosen) >= size || make_folders(path) != 0) return -1;
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 022) != 0)
        return -1;
    return 0;
}

static int file_name(const symmem_core_services_t *core, uint64_t key, char *path, size_t size)
{
    if (folder(core, path, size) != 0) return -1;
    size_t used = strlen(path);
    int n = snprintf(path + used, size - used, "/%016llx.ptx", (unsigned long long)key);
    return n > 0 && (size_t)n < size - used ? 0 : -1;
}

char *symmem__ptx_cache_load(const symmem_core_services_t *core, uint64_t key)
{
    char path[4096];
    if (file_name(core, key, path, sizeof(path)) != 0) return NULL;
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    char *ptx = NULL;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && st.st_size > 0 &&
        (size_t)st.st_size <= MAX_PTX_BYTES && (ptx = malloc((size_t)st.st_size + 1)) != NULL) {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t n = read(fd, ptx + got, (size_t)st.st_size - got);
            if (n <= 0) break;
            got += (size_t)n;
        }
        ptx[got] = '\0';
        /* every PTX module declares its version first thing */
        if (got != (size_t)st.st_size || strstr(ptx, ".version") == NULL) {
            free(ptx);
            ptx = NULL;
        }
    }
    close(fd);
    return ptx;
}

void symmem__ptx_cache_store(const symmem_core_services_t *core, uint64_t key, const char *ptx)
{
    char path[4096], temporary[4160];
    if (file_name(core, key, path, sizeof(path)) != 0) return;
    snprintf(temporary, sizeof(temporary), "%s.%ld.tmp", path, (long)getpid());
    int fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0) return;
    size_t size = strlen(ptx), put = 0;
    while (put < size) {
        ssize_t n = write(fd, ptx + put, size - put);
        if (n <= 0) break;
        put += (size_t)n;
    }
    if (close(fd) != 0 || put != size || rename(temporary, path) != 0) unlink(temporary);
}

/* Shared-memory files: names, the checks before mapping one, and each PE's
 * heap. /dev/shm is shared by every user of the host, so a file is created
 * only exclusively (O_EXCL, 0600) and joined only once it has been checked. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/error.h"
#include "cpu.h"

#define SHM_DIR "/dev/shm"

void symmem__cpu_segment_name(char *out, size_t size, const char *job, const char *nonce,
                              const char *what, int pe)
{
    unsigned uid = (unsigned)geteuid();
    if (nonce == NULL)
        snprintf(out, size, SHM_DIR "/symmem-%u-%s-%s", uid, job, what);
    else
        snprintf(out, size, SHM_DIR "/symmem-%u-%s-%s-%s%d", uid, job, nonce, what, pe);
}

/* Why the open file fd may not be joined ("" if it may): every check is about
 * the file itself, so nobody can swap it after we looked. */
static void segment_refusal(int fd, size_t size, char *why, size_t why_size)
{
    struct stat st;
    why[0] = '\0';
    if (fstat(fd, &st) != 0)
        snprintf(why, why_size, "cannot be examined: %s", strerror(errno));
    else if (!S_ISREG(st.st_mode))
        snprintf(why, why_size, "is not a regular file");
    else if (st.st_uid != geteuid())
        snprintf(why, why_size, "belongs to uid %u, not to this user (uid %u)", (unsigned)st.st_uid,
                 (unsigned)geteuid());
    else if ((st.st_mode & 077) != 0)
        snprintf(why, why_size,
                 "has mode 0%o: other users may read or write it (symmem "
                 "makes its files 0600)",
                 (unsigned)(st.st_mode & 0777));
    else if (st.st_nlink != 1)
        snprintf(why, why_size, "has %lu names (hard links); symmem's files have one",
                 (unsigned long)st.st_nlink);
    else if (size > 0 && (size_t)st.st_size != size)
        snprintf(why, why_size, "has %lld bytes, not the %zu expected", (long long)st.st_size,
                 size);
}

symmem_status_t symmem__cpu_segment_open(const char *name, const char *what, size_t size, int *fd_p,
                                         int *missing_p)
{
    /* O_NOFOLLOW: a symbolic link planted under our name is refused;
     * O_NONBLOCK: a FIFO planted there cannot make open() wait. */
    int fd = open(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0 && errno == ENOENT && missing_p != NULL) {
        *missing_p = 1;
        return SYMMEM_OK;
    }
    if (fd < 0 && errno == ELOOP)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: %s %s is a symbolic link; symmem does not follow it. "
                             "Remove it (rm %s) if you made it, else ask who did",
                             what, name, name);
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP, "init: cannot open %s %s: %s", what, name,
                             strerror(errno));
    char why[200];
    segment_refusal(fd, size, why, sizeof(why));
    if (why[0] != '\0') {
        close(fd);
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: %s %s %s, so symmem does not use it. If no job of yours "
                             "is running, remove it (rm %s; a file of another user only its "
                             "owner or root can remove)",
                             what, name, why, name);
    }
    if (missing_p != NULL) *missing_p = 0;
    *fd_p = fd;
    return SYMMEM_OK;
}

int symmem__cpu_segment_named(int fd, const char *name)
{
    struct stat ours, named;
    return fstat(fd, &ours) == 0 && lstat(name, &named) == 0 && ours.st_dev == named.st_dev &&
           ours.st_ino == named.st_ino;
}

/* The heap file mapped at a multiple of SYMMEM_CPU_ALIGN_MAX, so that one
 * offset is aligned on every PE for symmem_align: a larger range is
 * reserved, and the file mapped over its aligned part. */
static void *map_aligned(int fd, size_t size)
{
    size_t align = SYMMEM_CPU_ALIGN_MAX;
    char *range =
        mmap(NULL, size + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) return MAP_FAILED;
    char *base = (char *)(((uintptr_t)range + align - 1) & ~(uintptr_t)(align - 1));
    if (mmap(base, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
        munmap(range, size + align);
        return MAP_FAILED;
    }
    if (base > range) munmap(range, (size_t)(base - range));
    size_t tail = (size_t)(range + size + align - (base + size));
    if (tail) munmap(base + size, tail);
    return base;
}

symmem_status_t symmem__cpu_heap_create(cpu_t *cpu)
{
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, cpu->ctl->nonce, "heap", cpu->me);
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: cannot create the heap %s: %s (a name only this job's "
                             "PE %d makes; remove the file if you made it)",
                             name, strerror(errno), cpu->me);
    symmem_status_t status;
    /* The umask may have taken bits away; peers require exactly 0600. */
    if (fchmod(fd, 0600) != 0 || ftruncate(fd, (off_t)cpu->heap_size) != 0) {
        status = symmem__error(SYMMEM_ERR_NO_MEMORY, "init: cannot size the heap %s to %zu: %s",
                               name, cpu->heap_size, strerror(errno));
        goto err_unlink;
    }
    /* Nothing is stored into the heap before malloc commits its pages. */
    void *base = map_aligned(fd, cpu->heap_size);
    if (base == MAP_FAILED) {
        status = symmem__error(SYMMEM_ERR_NO_MEMORY, "init: cannot map the heap %s (%zu bytes): %s",
                               name, cpu->heap_size, strerror(errno));
        goto err_unlink;
    }
    cpu->heaps[cpu->me] = base;
    cpu->heap_fd = fd;
    return SYMMEM_OK;
err_unlink:
    unlink(name);
    close(fd);
    return status;
}

symmem_status_t symmem__cpu_heap_map_peer(cpu_t *cpu, int pe)
{
    char name[512], what[32];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, cpu->ctl->nonce, "heap", pe);
    snprintf(what, sizeof(what), "PE %d's heap", pe);
    int fd;
    SYMMEM_CHECK(symmem__cpu_segment_open(name, what, cpu->heap_size, &fd, NULL));
    void *base = mmap(NULL, cpu->heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return symmem__error(SYMMEM_ERR_NO_MEMORY, "init: cannot map PE %d's heap (%zu bytes): %s",
                             pe, cpu->heap_size, strerror(errno));
    cpu->heaps[pe] = base;
    return SYMMEM_OK;
}

void symmem__cpu_segments_unlink(cpu_t *cpu, int failed)
{
    char name[512];
    if (cpu->ctl == NULL) return;
    int every = cpu->claimed && (cpu->me == 0 || failed); /* every name, not only ours */
    for (int pe = 0; pe < cpu->n; pe++) {
        if (pe != cpu->me && !every) continue;
        if (pe == cpu->me && cpu->heap_fd < 0) continue; /* never made */
        symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, cpu->ctl->nonce, "heap", pe);
        unlink(name);
    }
    if (every && cpu->ctl_fd >= 0) {
        symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, NULL, "ctl", -1);
        if (symmem__cpu_segment_named(cpu->ctl_fd, name)) unlink(name);
    }
}

void symmem__cpu_segments_retire(cpu_t *cpu)
{
    for (int pe = 0; pe < cpu->n; pe++) {
        if (cpu->heaps[pe] == NULL) continue;
        /* MAP_FIXED swaps the pages in place: the address range stays valid. */
        mmap(cpu->heaps[pe], cpu->heap_size, PROT_READ | PROT_WRITE,
             MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        cpu->heaps[pe] = NULL;
    }
    if (cpu->heap_fd >= 0) close(cpu->heap_fd);
    cpu->heap_fd = -1;
    if (cpu->ctl_fd >= 0) close(cpu->ctl_fd);
    cpu->ctl_fd = -1;
    if (cpu->ctl != NULL) munmap(cpu->ctl, cpu->ctl_size);
    cpu->ctl = NULL;
}

symmem_status_t symmem__cpu_heap_commit(cpu_t *cpu, size_t offset, size_t size)
{
    /* Reserving the pages now turns a full /dev/shm into an error here
     * rather than a SIGBUS at the first store. */
    int rc;
    do rc = posix_fallocate(cpu->heap_fd, (off_t)offset, (off_t)size);
    while (rc == EINTR);
    if (rc == 0) return SYMMEM_OK;
    return symmem__error(SYMMEM_ERR_NO_MEMORY,
                         "malloc: cannot commit %zu bytes of shared memory in " SHM_DIR ": %s",
                         size, strerror(rc));
}

void symmem__cpu_heap_release(cpu_t *cpu, size_t offset, size_t size)
{
    /* Only whole pages inside the block: its neighbours share the others. */
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t first = (offset + page - 1) / page * page;
    size_t last = (offset + size) / page * page;
    if (last > first)
        fallocate(cpu->heap_fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)first,
                  (off_t)(last - first));
}

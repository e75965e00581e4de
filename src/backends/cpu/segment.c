/* Shared-memory files: the control segment and each PE's heap. */
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

void symmem__cpu_segment_name(char *out, size_t size, const char *job, const char *what, int pe)
{
    if (pe >= 0) snprintf(out, size, SHM_DIR "/symmem-%s-%s%d", job, what, pe);
    else snprintf(out, size, SHM_DIR "/symmem-%s-%s", job, what);
}

static size_t ctl_size_for(int nranks)
{
    return sizeof(cpu_ctl_t) + (size_t)nranks * sizeof(cpu_pe_slot_t);
}

/* Makes a fully initialised control segment appear under name at once:
 * write it under a private name, then link() it into place. */
static symmem_status_t ctl_publish(cpu_t *cpu, const char *name)
{
    char tmp[600];
    snprintf(tmp, sizeof(tmp), "%s.tmp%ld", name, (long)getpid());
    int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot create %s: %s", tmp,
                             strerror(errno));
    size_t size = ctl_size_for(cpu->n);
    symmem_status_t status = SYMMEM_OK;
    if (ftruncate(fd, (off_t)size) != 0) {
        status = symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot size %s: %s", tmp,
                               strerror(errno));
        goto out_unlink;
    }
    cpu_ctl_t header = {.magic = CPU_CTL_MAGIC, .nranks = cpu->n,
                        .heap_size = cpu->heap_size};
    if (pwrite(fd, &header, offsetof(cpu_ctl_t, heap_size) + sizeof(header.heap_size), 0) < 0) {
        status = symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot write %s: %s", tmp,
                               strerror(errno));
        goto out_unlink;
    }
    if (link(tmp, name) != 0 && errno != EEXIST)
        status = symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot create %s: %s", name,
                               strerror(errno));
out_unlink:
    unlink(tmp);
    close(fd);
    return status;
}

symmem_status_t symmem__cpu_ctl_join(cpu_t *cpu, double deadline)
{
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, "ctl", -1);
    int fd;
    while ((fd = open(name, O_RDWR | O_CLOEXEC)) < 0) {
        if (errno != ENOENT)
            return symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot open %s: %s", name,
                                 strerror(errno));
        SYMMEM_CHECK(ctl_publish(cpu, name));
        if (symmem__cpu_now() > deadline)
            return symmem__error(SYMMEM_ERR_BOOTSTRAP, "init: cannot join %s", name);
    }
    struct stat st;
    symmem_status_t status = SYMMEM_OK;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(cpu_ctl_t)) {
        status = symmem__error(SYMMEM_ERR_BOOTSTRAP, "init: %s is not a symmem control segment",
                               name);
        goto out_close;
    }
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        status = symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot map %s: %s", name,
                               strerror(errno));
        goto out_close;
    }
    cpu_ctl_t *ctl = base;
    if (ctl->magic != CPU_CTL_MAGIC || ctl->nranks != cpu->n ||
        ctl->heap_size != cpu->heap_size) {
        status = symmem__error(SYMMEM_ERR_MISMATCH,
                               "init: the job's PEs disagree: this PE was started with "
                               "%d PEs and SYMMEM_SYMMETRIC_SIZE=%zu, but the job %s has %d "
                               "PEs and %llu bytes",
                               cpu->n, cpu->heap_size, cpu->boot.job, (int)ctl->nranks,
                               (unsigned long long)ctl->heap_size);
        munmap(base, (size_t)st.st_size);
        goto out_close;
    }
    cpu->ctl = ctl;
    cpu->ctl_size = (size_t)st.st_size;
out_close:
    close(fd);
    return status;
}

symmem_status_t symmem__cpu_heap_create(cpu_t *cpu)
{
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, "heap", cpu->me);
    int fd = open(name, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: cannot create the heap %s: %s (is another PE %d of job "
                             "%s running?)",
                             name, strerror(errno), cpu->me, cpu->boot.job);
    symmem_status_t status;
    if (ftruncate(fd, (off_t)cpu->heap_size) != 0) {
        status = symmem__error(SYMMEM_ERR_NO_MEMORY, "init: cannot size the heap %s to %zu: %s",
                               name, cpu->heap_size, strerror(errno));
        goto err_unlink;
    }
    void *base = mmap(NULL, cpu->heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
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
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, "heap", pe);
    int fd = open(name, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP, "init: cannot open PE %d's heap %s: %s", pe,
                             name, strerror(errno));
    void *base = mmap(NULL, cpu->heap_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (base == MAP_FAILED)
        return symmem__error(SYMMEM_ERR_NO_MEMORY, "init: cannot map PE %d's heap (%zu bytes): %s",
                             pe, cpu->heap_size, strerror(errno));
    cpu->heaps[pe] = base;
    return SYMMEM_OK;
}

void symmem__cpu_segments_unlink(cpu_t *cpu)
{
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, "heap", cpu->me);
    unlink(name);
    if (cpu->me == 0) {
        symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, "ctl", -1);
        unlink(name);
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
                         "malloc: cannot commit %zu bytes of shared memory in " SHM_DIR
                         ": %s",
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

/* The control segment: made by the first PE of a job to arrive, published
 * complete under its name, joined by the others once checked, and replaced
 * when every process it records has gone (a job killed during init); then
 * each PE's claim of its slot, and the wait until every PE has claimed. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../core/error.h"
#include "../../core/peer_status.h"
#include "cpu.h"

#define SHM_DIR "/dev/shm"

/* Every byte of the header is a field or the zeroed tail before slots[]. */
_Static_assert(offsetof(cpu_ctl_t, key) + CPU_KEY_SIZE == 136, "padding between header fields");

static size_t ctl_size_for(int nranks)
{
    return sizeof(cpu_ctl_t) + (size_t)nranks * sizeof(cpu_pe_slot_t);
}

static void random_nonce(char *out)
{
    unsigned char bytes[16];
    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes)) {
        /* No entropy source: the time and pid still differ from job to job. */
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        unsigned long long seed = (unsigned long long)ts.tv_nsec ^
                                  ((unsigned long long)ts.tv_sec << 20) ^
                                  ((unsigned long long)getpid() << 40);
        for (size_t i = 0; i < sizeof(bytes); i++) bytes[i] = (unsigned char)(seed >> (4 * i));
    }
    for (size_t i = 0; i < sizeof(bytes); i++) sprintf(out + 2 * i, "%02x", bytes[i]);
}

/* Whether process pid runs; start_time 0: not yet recorded, so the pid decides. */
static int process_alive(pid_t pid, uint64_t start_time)
{
    if (pid <= 0) return 0;
    if (start_time == 0) return kill(pid, 0) == 0 || errno == EPERM;
    return !symmem__process_gone(pid, start_time);
}

/* A live process the segment records (its maker or a slot's owner), or 0 if
 * every one has gone: then the segment is stale. */
static pid_t ctl_live_process(cpu_ctl_t *ctl)
{
    if (process_alive(ctl->maker_pid, ctl->maker_start_time)) return ctl->maker_pid;
    for (int pe = 0; pe < ctl->nranks; pe++) {
        cpu_pe_slot_t *slot = &ctl->slots[pe];
        /* acquire pairs with the owner's claiming compare-and-swap; start_time
         * is then 0 (the pid alone decides) or the owner's: relaxed suffices. */
        pid_t pid = atomic_load_explicit(&slot->pid, memory_order_acquire);
        if (process_alive(pid, atomic_load_explicit(&slot->start_time, memory_order_relaxed)))
            return pid;
    }
    return 0;
}

/* Makes a complete control segment and links it under name; *exists_p = 1
 * if another PE linked one first. */
static symmem_status_t ctl_create(cpu_t *cpu, const char *name, const char *key, int *exists_p)
{
    size_t size = ctl_size_for(cpu->n);
    char tmp[600] = "";
    symmem_status_t status = SYMMEM_OK;
    *exists_p = 0;
    /* An unnamed file: a kill before link() leaves nothing behind. */
    int fd = open(SHM_DIR, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
        char nonce[CPU_NONCE_SIZE];
        random_nonce(nonce);
        snprintf(tmp, sizeof(tmp), "%s.%ld-%s", name, (long)getpid(), nonce);
        fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot create a file in " SHM_DIR ": %s",
                             strerror(errno));
    /* Reserve every page now: a full /dev/shm fails here, never as a SIGBUS
     * at a later store. The pages come zeroed, padding included. */
    int rc;
    do rc = posix_fallocate(fd, 0, (off_t)size);
    while (rc == EINTR);
    /* Peers make their own at the same time: on a nearly full /dev/shm only
     * one may fit, and the others join it once it appears. */
    struct stat st;
    for (int i = 0; rc == ENOSPC && i < 100 && !*exists_p; i++) {
        *exists_p = lstat(name, &st) == 0;
        if (!*exists_p) usleep(10000);
    }
    if (*exists_p) goto out_close;
    if (rc != 0) {
        status =
            symmem__error(rc == ENOSPC ? SYMMEM_ERR_NO_MEMORY : SYMMEM_ERR_SYSTEM,
                          "init: cannot reserve %zu bytes in " SHM_DIR
                          " for the control segment %s: %s (df -h " SHM_DIR " shows what is left)",
                          size, name, strerror(rc));
        goto out_close;
    }
    cpu_ctl_t *ctl = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (fchmod(fd, 0600) != 0 || ctl == MAP_FAILED) { /* the umask may have taken bits */
        status = symmem__error(SYMMEM_ERR_SYSTEM,
                               "init: cannot prepare the control segment "
                               "%s: %s",
                               name, strerror(errno));
        if (ctl != MAP_FAILED) munmap(ctl, size);
        goto out_close;
    }
    ctl->magic = CPU_CTL_MAGIC;
    ctl->nranks = cpu->n;
    ctl->maker_pid = (int32_t)getpid();
    ctl->maker_start_time = symmem__process_start_time(getpid());
    ctl->heap_size = cpu->heap_size;
    random_nonce(ctl->nonce);
    snprintf(ctl->key, sizeof(ctl->key), "%s", key);
    munmap(ctl, size);
    if (tmp[0] != '\0') {
        rc = link(tmp, name);
    } else {
        char self[64];
        snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
        rc = linkat(AT_FDCWD, self, AT_FDCWD, name, AT_SYMLINK_FOLLOW);
    }
    *exists_p = rc != 0 && errno == EEXIST;
    if (rc != 0 && !*exists_p)
        status =
            symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot create %s: %s", name, strerror(errno));
out_close:
    if (tmp[0] != '\0') unlink(tmp);
    close(fd);
    return status;
}

/* Maps the segment open as fd once its header and size agree. */
static symmem_status_t ctl_map(int fd, const char *name, cpu_ctl_t **ctl_p, size_t *size_p)
{
    struct stat st;
    cpu_ctl_t header;
    if (fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(header) ||
        pread(fd, &header, sizeof(header), 0) != (ssize_t)sizeof(header) ||
        header.magic != CPU_CTL_MAGIC || header.nranks < 1 ||
        (size_t)st.st_size != ctl_size_for(header.nranks))
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: the control segment %s is not one of this version of "
                             "symmem "
                             "(%lld bytes). If no job of yours is running, remove it: rm %s",
                             name, (long long)st.st_size, name);
    void *base = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED)
        return symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot map %s: %s", name, strerror(errno));
    *ctl_p = base;
    *size_p = (size_t)st.st_size;
    return SYMMEM_OK;
}

static int nonce_is_hex(const char *nonce)
{
    size_t n = strnlen(nonce, CPU_NONCE_SIZE);
    return n == 32 && strspn(nonce, "0123456789abcdef") == n;
}

/* Removes the stale segment open as fd, and its job's heap files, if it is
 * still stale and still named name. The lock orders PEs that found it stale
 * at once: the later ones find the name gone or naming a new segment. */
static symmem_status_t ctl_remove_stale(cpu_t *cpu, int fd, cpu_ctl_t *ctl, const char *name)
{
    if (flock(fd, LOCK_EX) != 0)
        return symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot lock the stale %s: %s", name,
                             strerror(errno));
    if (symmem__cpu_segment_named(fd, name) && ctl_live_process(ctl) == 0) {
        char nonce[CPU_NONCE_SIZE], heap[512];
        memcpy(nonce, ctl->nonce, sizeof(nonce));
        nonce[sizeof(nonce) - 1] = '\0';
        for (int pe = 0; nonce_is_hex(nonce) && pe < ctl->nranks; pe++) {
            symmem__cpu_segment_name(heap, sizeof(heap), cpu->boot.job, nonce, "heap", pe);
            unlink(heap);
        }
        if (unlink(name) != 0 && errno != ENOENT) {
            symmem_status_t status =
                symmem__error(SYMMEM_ERR_SYSTEM, "init: cannot remove the stale %s: %s (rm %s)",
                              name, strerror(errno), name);
            flock(fd, LOCK_UN);
            return status;
        }
    }
    flock(fd, LOCK_UN);
    return SYMMEM_OK;
}

/* How a job key reads in a message. */
static void describe_key(const char *key, char *out, size_t size)
{
    long pid;
    if (sscanf(key, "launcher %ld", &pid) == 1)
        snprintf(out, size, "started by process %ld", pid);
    else if (strncmp(key, "secret ", 7) == 0)
        snprintf(out, size, "given a SYMMEM_JOB_SECRET");
    else if (strcmp(key, "uid") == 0)
        snprintf(out, size, "started from a unique id");
    else
        snprintf(out, size, "started without a launcher");
}

/* The segment must be this job's: the same key, PE count and heap size. */
static symmem_status_t ctl_check_job(cpu_t *cpu, cpu_ctl_t *ctl, const char *name,
                                     const symmem_job_identity_t *id)
{
    char theirs[CPU_KEY_SIZE], their_words[96], our_words[96];
    memcpy(theirs, ctl->key, sizeof(theirs));
    theirs[sizeof(theirs) - 1] = '\0';
    if (strcmp(theirs, id->key) != 0) {
        describe_key(theirs, their_words, sizeof(their_words));
        describe_key(id->key, our_words, sizeof(our_words));
        if (strcmp(their_words, our_words) == 0) /* two different secrets */
            snprintf(our_words, sizeof(our_words), "given another one");
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: another job with the same name %s is starting on this "
                             "host: the PE that made %s was %s, this PE was %s. Two jobs "
                             "named by the same %s cannot start at once: give each its own, "
                             "or, if these PEs are one job started from different shells, "
                             "set the same SYMMEM_JOB_SECRET in all of them",
                             cpu->boot.job, name, their_words, our_words, id->named_by);
    }
    if (ctl->nranks != cpu->n || ctl->heap_size != cpu->heap_size)
        return symmem__error(SYMMEM_ERR_MISMATCH,
                             "init: the job's PEs disagree: this PE was started with "
                             "%d PEs and SYMMEM_SYMMETRIC_SIZE=%zu, but the job %s has %d "
                             "PEs and %llu bytes",
                             cpu->n, cpu->heap_size, cpu->boot.job, (int)ctl->nranks,
                             (unsigned long long)ctl->heap_size);
    return SYMMEM_OK;
}

/* One look at name: joins the segment there (*joined_p = 1), or makes one
 * where there is none or removes a stale one (*joined_p = 0: look again). */
static symmem_status_t ctl_try_join(cpu_t *cpu, const symmem_job_identity_t *id, const char *name,
                                    int *joined_p)
{
    int fd, missing, exists;
    cpu_ctl_t *ctl = NULL;
    size_t size = 0;
    symmem_status_t status;
    *joined_p = 0;
    SYMMEM_CHECK(symmem__cpu_segment_open(name, "the control segment", 0, &fd, &missing));
    if (missing) return ctl_create(cpu, name, id->key, &exists);
    SYMMEM_CHECK_GOTO(ctl_map(fd, name, &ctl, &size), status, err_close);
    if (ctl_live_process(ctl) == 0) {
        status = ctl_remove_stale(cpu, fd, ctl, name);
        goto err_unmap; /* not an error: look again */
    }
    SYMMEM_CHECK_GOTO(ctl_check_job(cpu, ctl, name, id), status, err_unmap);
    cpu->ctl = ctl;
    cpu->ctl_size = size;
    cpu->ctl_fd = fd;
    *joined_p = 1;
    return SYMMEM_OK;
err_unmap:
    munmap(ctl, size);
err_close:
    close(fd);
    return status;
}

/* Looks at the name before giving up. Each look joins, fails, or changes
 * what is there (makes the segment, removes a stale one), so a job's PEs
 * need two or three; only processes that keep replacing it need more. Not
 * bounded by init's deadline: joining waits for no other PE, and a short
 * SYMMEM_TIMEOUT must not fail a one-PE job here (it once did, leaving the
 * segment it had just made in /dev/shm). */
#define CTL_LOOKS 100

symmem_status_t symmem__cpu_ctl_join(cpu_t *cpu, const symmem_job_identity_t *id)
{
    char name[512];
    symmem__cpu_segment_name(name, sizeof(name), cpu->boot.job, NULL, "ctl", -1);
    int joined = 0;
    for (int look = 0; !joined && look < CTL_LOOKS; look++)
        SYMMEM_CHECK(ctl_try_join(cpu, id, name, &joined));
    if (!joined)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: cannot join %s: other processes replaced it %d times while "
                             "this PE looked",
                             name, CTL_LOOKS);
    return SYMMEM_OK;
}

symmem_status_t symmem__cpu_slot_claim(cpu_t *cpu)
{
    cpu_pe_slot_t *slot = &cpu->ctl->slots[cpu->me];
    pid_t me = getpid();
    int32_t holder = 0;
    /* The claim itself; nothing is stored into the slot before it is won.
     * acq_rel pairs with ctl_live_process's acquire load of pid. */
    if (!atomic_compare_exchange_strong_explicit(&slot->pid, &holder, (int32_t)me,
                                                 memory_order_acq_rel, memory_order_acquire)) {
        uint64_t start = atomic_load_explicit(&slot->start_time, memory_order_relaxed);
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: PE %d of job %s is already taken by process %d (%s): "
                             "two processes were started as PE %d, or another job named by "
                             "the same variables is starting on this host (give it its own, "
                             "or a different SYMMEM_JOB_SECRET)",
                             cpu->me, cpu->boot.job, (int)holder,
                             process_alive(holder, start) ? "running" : "which has exited",
                             cpu->me);
    }
    cpu->claimed = 1;
    atomic_store_explicit(&slot->start_time, symmem__process_start_time(me), memory_order_relaxed);
    snprintf(slot->host, sizeof(slot->host), "%s", cpu->boot.host);
    return SYMMEM_OK;
}

void symmem__cpu_slot_publish(cpu_t *cpu, uint32_t state)
{
    /* release: who sees the state (acquire, in init's wait and peers.c)
     * sees start_time and host. */
    atomic_store_explicit(&cpu->ctl->slots[cpu->me].state, state, memory_order_release);
    for (int pe = 0; pe < cpu->n; pe++)
        if (pe != cpu->me) symmem__cpu_ring(cpu, pe, CPU_WAIT_PEERS);
}

/* ---- waiting for the others ---- */

/* Every PE has joined, or one failed to. */
static int all_joined(void *arg)
{
    cpu_t *cpu = arg;
    int absent = 0;
    for (int pe = 0; pe < cpu->n; pe++) {
        /* acquire pairs with the release in symmem__cpu_slot_publish */
        uint32_t state = atomic_load_explicit(&cpu->ctl->slots[pe].state, memory_order_acquire);
        if (state == PE_FAILED) return 1;
        absent += state == PE_ABSENT;
    }
    return absent == 0;
}

static void not_joined(void *arg, char *out, size_t size)
{
    cpu_t *cpu = arg;
    int n = snprintf(out, size, "PEs that never started:");
    for (int pe = 0; pe < cpu->n && n < (int)size; pe++)
        if (atomic_load_explicit(&cpu->ctl->slots[pe].state, memory_order_acquire) == PE_ABSENT)
            n += snprintf(out + n, size - (size_t)n, " %d", pe);
}

static symmem_status_t check_none_failed(cpu_t *cpu)
{
    for (int pe = 0; pe < cpu->n; pe++)
        if (atomic_load_explicit(&cpu->ctl->slots[pe].state, memory_order_acquire) == PE_FAILED)
            return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                                 "init: PE %d (pid %d) failed to start; its own error says why", pe,
                                 (int)atomic_load(&cpu->ctl->slots[pe].pid));
    return SYMMEM_OK;
}

static symmem_status_t check_one_host(cpu_t *cpu)
{
    for (int pe = 0; pe < cpu->n; pe++)
        if (strcmp(cpu->ctl->slots[pe].host, cpu->boot.host) != 0)
            return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                                 "init: the cpu backend runs on one host, but PE %d is on "
                                 "'%s' and this PE on '%s'",
                                 pe, cpu->ctl->slots[pe].host, cpu->boot.host);
    return SYMMEM_OK;
}

symmem_status_t symmem__cpu_slots_wait_joined(cpu_t *cpu, double deadline)
{
    SYMMEM_CHECK(
        symmem__cpu_wait(cpu, "init", CPU_WAIT_PEERS, all_joined, not_joined, NULL, cpu, deadline));
    SYMMEM_CHECK(check_none_failed(cpu));
    return check_one_host(cpu);
}

symmem_status_t symmem__cpu_start_up_timed_out(cpu_t *cpu)
{
    char said[768];
    snprintf(said, sizeof(said), "%s", symmem_last_error());
    if (cpu->boot.timeout > 0)
        return symmem__error(SYMMEM_ERR_TIMEOUT,
                             "%s. SYMMEM_TIMEOUT=%g s bounds init's wait for every PE to start "
                             "as well, and that was too short for this job's start-up: raise it, "
                             "or unset it (init then waits %g s)",
                             said, cpu->boot.timeout, CPU_INIT_TIMEOUT_SECONDS);
    return symmem__error(SYMMEM_ERR_TIMEOUT,
                         "%s. init waits %g s for every PE to start (SYMMEM_TIMEOUT sets "
                         "another bound)",
                         said, CPU_INIT_TIMEOUT_SECONDS);
}

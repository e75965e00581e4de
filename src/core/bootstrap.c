#include "bootstrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "error.h"

/* Layout of a unique id's bytes. */
#define UID_MAGIC "SYMMEMID"
typedef struct {
    char magic[8];
    char job[56];
    char host[64];
} uid_layout_t;
_Static_assert(sizeof(uid_layout_t) == SYMMEM_UNIQUE_ID_SIZE, "uid layout");

static void host_name(char *out, size_t size)
{
    if (gethostname(out, size) != 0) snprintf(out, size, "localhost");
    out[size - 1] = '\0';
}

static void random_hex(char *out, size_t nhex)
{
    unsigned char bytes[32];
    size_t n = nhex / 2 < sizeof(bytes) ? nhex / 2 : sizeof(bytes);
    if (getrandom(bytes, n, 0) != (ssize_t)n) {
        /* No entropy source: time and pid still make clashes unlikely. */
        unsigned long long seed =
            (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
        for (size_t i = 0; i < n; i++) bytes[i] = (unsigned char)(seed >> (8 * (i % 8)));
    }
    for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", bytes[i]);
}

symmem_status_t symmem__cpu_unique_id(symmem_unique_id_t *uid_p)
{
    if (uid_p == NULL)
        return symmem__error(SYMMEM_ERR_INVALID, "get_unique_id: uid_p is NULL");
    uid_layout_t id;
    memset(&id, 0, sizeof(id));
    memcpy(id.magic, UID_MAGIC, 8);
    char hex[33] = {0};
    random_hex(hex, 32);
    snprintf(id.job, sizeof(id.job), "u%s", hex);
    host_name(id.host, sizeof(id.host));
    memcpy(uid_p->bytes, &id, sizeof(id));
    return SYMMEM_OK;
}


/* FNV-1a: turns a launcher's identifiers into a short rendezvous name. */
static unsigned long long hash_text(const char *text)
{
    unsigned long long h = 1469598103934665603ULL;
    for (; *text; text++) h = (h ^ (unsigned char)*text) * 1099511628211ULL;
    return h;
}

/* One of the launchers we understand; job names the rendezvous. */
static int from_launcher_env(symmem_bootstrap_t *boot)
{
    int rank, size;
    char key[512];
    if (symmem__env_count("SYMMEM_RANK", &rank) && symmem__env_count("SYMMEM_NRANKS", &size) &&
        symmem__env_is_set("SYMMEM_JOB")) {
        snprintf(boot->job, sizeof(boot->job), "%s", symmem__env_string("SYMMEM_JOB"));
        snprintf(boot->status_dir, sizeof(boot->status_dir), "%s",
                 symmem__env_string("SYMMEM_STATUS_DIR"));
    } else if (symmem__env_count("RANK", &rank) && symmem__env_count("WORLD_SIZE", &size)) {
        /* torchrun */
        snprintf(key, sizeof(key), "%s:%s:%s", symmem__env_string("MASTER_ADDR"),
                 symmem__env_string("MASTER_PORT"), symmem__env_string("TORCHELASTIC_RUN_ID"));
        snprintf(boot->job, sizeof(boot->job), "t%016llx", hash_text(key));
    } else if (symmem__env_count("OMPI_COMM_WORLD_RANK", &rank) &&
               symmem__env_count("OMPI_COMM_WORLD_SIZE", &size)) {
        snprintf(key, sizeof(key), "%s:%s", symmem__env_string("PMIX_NAMESPACE"),
                 symmem__env_is_set("OMPI_MCA_ess_base_jobid")
                     ? symmem__env_string("OMPI_MCA_ess_base_jobid")
                     : symmem__env_string("OMPI_MCA_orte_ess_jobid"));
        snprintf(boot->job, sizeof(boot->job), "o%016llx", hash_text(key));
    } else if (symmem__env_count("SLURM_PROCID", &rank) && symmem__env_count("SLURM_NTASKS", &size)) {
        snprintf(key, sizeof(key), "%s.%s", symmem__env_string("SLURM_JOB_ID"),
                 symmem__env_string("SLURM_STEP_ID"));
        snprintf(boot->job, sizeof(boot->job), "s%016llx", hash_text(key));
    } else if (symmem__env_count("PMI_RANK", &rank) && symmem__env_count("PMI_SIZE", &size)) {
        /* MPICH's hydra: its proxy is the parent of every local rank. */
        snprintf(boot->job, sizeof(boot->job), "p%ld", (long)getppid());
    } else {
        return 0;
    }
    boot->rank = rank;
    boot->nranks = size;
    return 1;
}

static int local_rank_from_env(int fallback)
{
    static const char *const names[] = {"SYMMEM_LOCAL_RANK", "LOCAL_RANK",
                                        "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID",
                                        "MPI_LOCALRANKID", NULL};
    int value;
    for (int i = 0; names[i] != NULL; i++)
        if (symmem__env_count(names[i], &value)) return value;
    return fallback;
}

/* How many PEs share this host, where the launcher says. */
static int local_size_from_env(const symmem_bootstrap_t *boot)
{
    static const char *const names[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                        "MPI_LOCALNRANKS", NULL};
    int value;
    if (symmem__env_is_set("SYMMEM_JOB") && symmem__env_is_set("SYMMEM_NRANKS"))
        return boot->nranks; /* symmem.run starts every PE on this host */
    for (int i = 0; names[i] != NULL; i++)
        if (symmem__env_count(names[i], &value)) return value;
    return boot->have_uid ? 0 : boot->nranks;
}

symmem_status_t symmem__bootstrap_from_attr(const symmem_init_attr_t *attr,
                                            symmem_bootstrap_t *boot_p)
{
    symmem_bootstrap_t boot;
    memset(&boot, 0, sizeof(boot));
    host_name(boot.host, sizeof(boot.host));
    boot.device = attr->device;

    if (attr->method == SYMMEM_INIT_WITH_UID) {
        uid_layout_t id;
        memcpy(&id, attr->uid.bytes, sizeof(id));
        static const symmem_unique_id_t empty;
        if (memcmp(&attr->uid, &empty, sizeof(empty)) == 0)
            return symmem__error(SYMMEM_ERR_INVALID,
                                 "init: uid is empty (every PE needs the uid that one PE "
                                 "made with get_unique_id())");
        if (attr->nranks < 1)
            return symmem__error(SYMMEM_ERR_INVALID, "init: nranks=%d must be >= 1",
                                 attr->nranks);
        if (attr->rank < 0 || attr->rank >= attr->nranks)
            return symmem__error(SYMMEM_ERR_INVALID,
                                 "init: rank=%d is outside [0, nranks=%d)", attr->rank,
                                 attr->nranks);
        if (memcmp(id.magic, UID_MAGIC, 8) == 0) {
            id.job[sizeof(id.job) - 1] = '\0';
            snprintf(boot.job, sizeof(boot.job), "%s", id.job);
        } else { /* another backend's id (NVSHMEM's): its bytes name the job */
            char text[2 * SYMMEM_UNIQUE_ID_SIZE + 1];
            for (int i = 0; i < SYMMEM_UNIQUE_ID_SIZE; i++)
                sprintf(text + 2 * i, "%02x", attr->uid.bytes[i]);
            snprintf(boot.job, sizeof(boot.job), "n%016llx", hash_text(text));
        }
        boot.rank = attr->rank;
        boot.nranks = attr->nranks;
        boot.have_uid = 1;
        boot.uid = attr->uid;
    } else if (!from_launcher_env(&boot)) {
        /* No launcher: a world of one PE. */
        char hex[17] = {0};
        random_hex(hex, 16);
        snprintf(boot.job, sizeof(boot.job), "solo%ld-%s", (long)getpid(), hex);
        boot.rank = 0;
        boot.nranks = 1;
    }
    if (boot.rank >= boot.nranks)
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: rank %d is outside the job's %d PEs", boot.rank,
                             boot.nranks);
    boot.local_rank = local_rank_from_env(boot.rank);
    boot.local_size = local_size_from_env(&boot);
    boot.heap_size = symmem__env_size("SYMMEM_SYMMETRIC_SIZE");
    if (boot.heap_size == 0)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: SYMMEM_SYMMETRIC_SIZE=%s leaves no symmetric heap",
                             symmem__env_string("SYMMEM_SYMMETRIC_SIZE"));
    boot.timeout = symmem__env_number("SYMMEM_TIMEOUT");
    boot.spin_us = symmem__env_number("SYMMEM_SPIN_US");
    *boot_p = boot;
    return SYMMEM_OK;
}

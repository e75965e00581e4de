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
        unsigned long long seed = (unsigned long long)time(NULL) ^ ((unsigned long long)getpid() << 32);
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

/* Reads an integer variable; 1 if present and valid. */
static int env_int(const char *name, int *value_p)
{
    const char *text = getenv(name);
    if (text == NULL || text[0] == '\0') return 0;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno != 0 || *end != '\0' || value < 0 || value > 1 << 24) return 0;
    *value_p = (int)value;
    return 1;
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *text = getenv(name);
    return text != NULL && text[0] != '\0' ? text : fallback;
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
    if (env_int("SYMMEM_RANK", &rank) && env_int("SYMMEM_NRANKS", &size) &&
        getenv("SYMMEM_JOB") != NULL) {
        snprintf(boot->job, sizeof(boot->job), "%s", getenv("SYMMEM_JOB"));
        snprintf(boot->status_dir, sizeof(boot->status_dir), "%s",
                 env_or("SYMMEM_STATUS_DIR", ""));
    } else if (env_int("RANK", &rank) && env_int("WORLD_SIZE", &size)) {
        /* torchrun */
        snprintf(key, sizeof(key), "%s:%s:%s", env_or("MASTER_ADDR", ""),
                 env_or("MASTER_PORT", ""), env_or("TORCHELASTIC_RUN_ID", ""));
        snprintf(boot->job, sizeof(boot->job), "t%016llx", hash_text(key));
    } else if (env_int("OMPI_COMM_WORLD_RANK", &rank) &&
               env_int("OMPI_COMM_WORLD_SIZE", &size)) {
        snprintf(key, sizeof(key), "%s:%s", env_or("PMIX_NAMESPACE", ""),
                 env_or("OMPI_MCA_ess_base_jobid", env_or("OMPI_MCA_orte_ess_jobid", "")));
        snprintf(boot->job, sizeof(boot->job), "o%016llx", hash_text(key));
    } else if (env_int("SLURM_PROCID", &rank) && env_int("SLURM_NTASKS", &size)) {
        snprintf(key, sizeof(key), "%s.%s", env_or("SLURM_JOB_ID", ""),
                 env_or("SLURM_STEP_ID", ""));
        snprintf(boot->job, sizeof(boot->job), "s%016llx", hash_text(key));
    } else if (env_int("PMI_RANK", &rank) && env_int("PMI_SIZE", &size)) {
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
        if (env_int(names[i], &value)) return value;
    return fallback;
}

/* How many PEs share this host, where the launcher says. */
static int local_size_from_env(const symmem_bootstrap_t *boot)
{
    static const char *const names[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                        "MPI_LOCALNRANKS", NULL};
    int value;
    if (getenv("SYMMEM_JOB") != NULL && getenv("SYMMEM_NRANKS") != NULL)
        return boot->nranks; /* symmem.run starts every PE on this host */
    for (int i = 0; names[i] != NULL; i++)
        if (env_int(names[i], &value)) return value;
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
    boot.heap_size = symmem__env_symmetric_size();
    boot.timeout = symmem__env_timeout();
    boot.spin_us = symmem__env_spin_us();
    *boot_p = boot;
    return SYMMEM_OK;
}

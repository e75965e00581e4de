#include "bootstrap.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "env_check.h"
#include "error.h"
#include "peer_status.h"

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
    if (uid_p == NULL) return symmem__error(SYMMEM_ERR_INVALID, "get_unique_id: uid_p is NULL");
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
static unsigned long long hash_text_from(unsigned long long h, const char *text)
{
    for (; *text; text++) h = (h ^ (unsigned char)*text) * 1099511628211ULL;
    return h;
}

static unsigned long long hash_text(const char *text)
{
    return hash_text_from(1469598103934665603ULL, text);
}

/* The launchers we understand, in the order their variables are tried. */
typedef enum {
    LAUNCHER_NONE,
    LAUNCHER_SYMMEM,
    LAUNCHER_TORCHRUN,
    LAUNCHER_OMPI,
    LAUNCHER_SLURM,
    LAUNCHER_PMI,
    LAUNCHER_COUNT
} launcher_t;

/* rank_var: set by the launcher for its children only (a wrapper between
 * launcher and PE inherits it); size_var: the number of PEs. named_by: what
 * the job's name comes from. */
static const struct {
    const char *name;
    const char *rank_var, *size_var;
    const char *named_by;
} launchers[] = {
    [LAUNCHER_NONE] = {"", NULL, NULL, "a random name"},
    [LAUNCHER_SYMMEM] = {"symmem.run", "SYMMEM_RANK", "SYMMEM_NRANKS", "SYMMEM_JOB"},
    [LAUNCHER_TORCHRUN] = {"torchrun", "RANK", "WORLD_SIZE",
                           "MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID and "
                           "TORCHELASTIC_RESTART_COUNT"},
    [LAUNCHER_OMPI] = {"mpirun", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
                       "PMIX_NAMESPACE and OMPI_MCA_ess_base_jobid"},
    [LAUNCHER_SLURM] = {"srun", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_ID and SLURM_STEP_ID"},
    [LAUNCHER_PMI] = {"pmi", "PMI_RANK", "PMI_SIZE", "the parent process (MPICH's hydra proxy)"},
};

/* The launcher's job name, once its variables have been read. */
static void name_job(launcher_t launcher, symmem_bootstrap_t *boot)
{
    char key[512];
    switch (launcher) {
    case LAUNCHER_SYMMEM:
        snprintf(boot->job, sizeof(boot->job), "%s", symmem__env_string("SYMMEM_JOB"));
        snprintf(boot->status_dir, sizeof(boot->status_dir), "%s",
                 symmem__env_string("SYMMEM_STATUS_DIR"));
        break;
    case LAUNCHER_TORCHRUN: /* a restart of the workers is a new job */
        snprintf(key, sizeof(key), "%s:%s:%s:%s", symmem__env_string("MASTER_ADDR"),
                 symmem__env_string("MASTER_PORT"), symmem__env_string("TORCHELASTIC_RUN_ID"),
                 symmem__env_string("TORCHELASTIC_RESTART_COUNT"));
        snprintf(boot->job, sizeof(boot->job), "t%016llx", hash_text(key));
        break;
    case LAUNCHER_OMPI:
        snprintf(key, sizeof(key), "%s:%s", symmem__env_string("PMIX_NAMESPACE"),
                 symmem__env_is_set("OMPI_MCA_ess_base_jobid")
                     ? symmem__env_string("OMPI_MCA_ess_base_jobid")
                     : symmem__env_string("OMPI_MCA_orte_ess_jobid"));
        snprintf(boot->job, sizeof(boot->job), "o%016llx", hash_text(key));
        break;
    case LAUNCHER_SLURM:
        snprintf(key, sizeof(key), "%s.%s", symmem__env_string("SLURM_JOB_ID"),
                 symmem__env_string("SLURM_STEP_ID"));
        snprintf(boot->job, sizeof(boot->job), "s%016llx", hash_text(key));
        break;
    case LAUNCHER_PMI: /* MPICH's hydra: its proxy is the parent of every local rank */
        snprintf(boot->job, sizeof(boot->job), "p%ld", (long)getppid());
        break;
    default: break;
    }
}

/* A launcher's count (a PE's number, a number of PEs or of hosts): -1
 * where unset; else a whole number up to SYMMEM_MAX_PES, or an error naming
 * the variable and its value (never a world of one PE in its place). */
static symmem_status_t read_count(const char *name, int *value_p)
{
    long long value;
    SYMMEM_CHECK(symmem__env_whole("init", name, &value));
    if (value > SYMMEM_MAX_PES)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: %s=%lld is more than symmem runs (at most %d PEs)", name, value,
                             SYMMEM_MAX_PES);
    *value_p = (int)value;
    return SYMMEM_OK;
}

/* A launcher's rank and size, both set: the size at least 1, the rank below it. */
static symmem_status_t read_rank_and_size(launcher_t launcher, int *rank_p, int *size_p)
{
    const char *rank_var = launchers[launcher].rank_var;
    const char *size_var = launchers[launcher].size_var;
    int rank = -1, size = -1;
    SYMMEM_CHECK(read_count(size_var, &size));
    SYMMEM_CHECK(read_count(rank_var, &rank));
    if (size < 1)
        return symmem__error(SYMMEM_ERR_INVALID, "init: %s=%d: a job has at least 1 PE", size_var,
                             size);
    if (rank >= size)
        return symmem__error(SYMMEM_ERR_INVALID, "init: %s=%d is outside [0, %s=%d)", rank_var,
                             rank, size_var, size);
    *rank_p = rank;
    *size_p = size;
    return SYMMEM_OK;
}

/* The first launcher whose rank and size variables are set (symmem.run's:
 * either one), or LAUNCHER_NONE; its numbers and job name into boot. */
static symmem_status_t from_launcher_env(symmem_bootstrap_t *boot, launcher_t *launcher_p)
{
    for (launcher_t l = LAUNCHER_SYMMEM; l < LAUNCHER_COUNT; l++) {
        int has_rank = symmem__env_is_set(launchers[l].rank_var);
        int has_size = symmem__env_is_set(launchers[l].size_var);
        int ours = l == LAUNCHER_SYMMEM; /* no other program sets symmem.run's variables */
        if (!(has_rank && has_size) && !(ours && (has_rank || has_size))) continue;
        if (!(has_rank && has_size) || (ours && !symmem__env_is_set("SYMMEM_JOB")))
            return symmem__error(SYMMEM_ERR_INVALID,
                                 "init: %s='%s', %s='%s' and SYMMEM_JOB='%s': python -m "
                                 "symmem.run sets all three for each PE",
                                 launchers[l].rank_var, symmem__env_string(launchers[l].rank_var),
                                 launchers[l].size_var, symmem__env_string(launchers[l].size_var),
                                 symmem__env_string("SYMMEM_JOB"));
        SYMMEM_CHECK(read_rank_and_size(l, &boot->rank, &boot->nranks));
        name_job(l, boot);
        *launcher_p = l;
        return SYMMEM_OK;
    }
    *launcher_p = LAUNCHER_NONE;
    return SYMMEM_OK;
}

/* SYMMEM_JOB_SECRET, hashed: its first 64 bits join the job's name, so jobs
 * with different secrets never meet; all 128 are the key every PE shows. */
static int secret_hash(unsigned long long hash_p[2])
{
    if (!symmem__env_is_set("SYMMEM_JOB_SECRET")) return 0;
    const char *secret = symmem__env_string("SYMMEM_JOB_SECRET");
    hash_p[0] = hash_text(secret);
    hash_p[1] = hash_text_from(hash_p[0] ^ 0x9e3779b97f4a7c15ULL, secret);
    return 1;
}

/* The first of names (NULL-ended) that is set, by read_count; -1 if none is. */
static symmem_status_t first_count(const char *const names[], int *value_p)
{
    for (int i = 0; names[i] != NULL; i++)
        if (symmem__env_is_set(names[i])) return read_count(names[i], value_p);
    *value_p = -1;
    return SYMMEM_OK;
}

/* This PE's number on its host, where the launcher says; else fallback. */
static symmem_status_t local_rank_from_env(int fallback, int *local_rank_p)
{
    static const char *const names[] = {
        "SYMMEM_LOCAL_RANK", "LOCAL_RANK",      "OMPI_COMM_WORLD_LOCAL_RANK",
        "SLURM_LOCALID",     "MPI_LOCALRANKID", NULL};
    int value;
    SYMMEM_CHECK(first_count(names, &value));
    *local_rank_p = value >= 0 ? value : fallback;
    return SYMMEM_OK;
}

/* How many PEs share this host, where the launcher says. */
static symmem_status_t local_size_from_env(const symmem_bootstrap_t *boot, int *local_size_p)
{
    static const char *const names[] = {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE",
                                        "MPI_LOCALNRANKS", NULL};
    int value;
    if (symmem__env_is_set("SYMMEM_JOB") && symmem__env_is_set("SYMMEM_NRANKS")) {
        *local_size_p = boot->nranks; /* symmem.run starts every PE on this host */
        return SYMMEM_OK;
    }
    SYMMEM_CHECK(first_count(names, &value));
    *local_size_p = value >= 0 ? value : boot->have_uid ? 0 : boot->nranks;
    return SYMMEM_OK;
}

/* Why the launcher's PEs are on more than one host ("" if they are not, or
 * if it does not say). */
static symmem_status_t spans_hosts(launcher_t launcher, int nranks, char *out, size_t size)
{
    static const struct {
        launcher_t launcher;
        const char *local; /* below the launcher's size_var: more than one host */
    } sizes[] = {
        {LAUNCHER_TORCHRUN, "LOCAL_WORLD_SIZE"},
        {LAUNCHER_OMPI, "OMPI_COMM_WORLD_LOCAL_SIZE"},
        {LAUNCHER_SLURM, "SLURM_NTASKS_PER_NODE"},
        {LAUNCHER_PMI, "MPI_LOCALNRANKS"},
    };
    /* srun sets the step's node count for its tasks; SLURM_NNODES otherwise. */
    static const char *const node_counts[] = {"SLURM_STEP_NUM_NODES", "SLURM_NNODES", NULL};
    int local = -1, nodes = -1;
    out[0] = '\0';
    if (symmem__env_flag("SYMMEM_ONE_HOST_PER_PE") && nranks > 1) {
        snprintf(out, size, "SYMMEM_ONE_HOST_PER_PE=1");
        return SYMMEM_OK;
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if (sizes[i].launcher != launcher) continue;
        SYMMEM_CHECK(read_count(sizes[i].local, &local));
        if (local >= 0 && local < nranks) {
            snprintf(out, size, "%s=%d < %s=%d", sizes[i].local, local,
                     launchers[launcher].size_var, nranks);
            return SYMMEM_OK;
        }
    }
    if (launcher != LAUNCHER_SLURM) return SYMMEM_OK;
    for (int i = 0; node_counts[i] != NULL; i++) {
        if (!symmem__env_is_set(node_counts[i])) continue;
        SYMMEM_CHECK(read_count(node_counts[i], &nodes));
        if (nodes > 1) snprintf(out, size, "%s=%d", node_counts[i], nodes);
        return SYMMEM_OK;
    }
    return SYMMEM_OK;
}

symmem_status_t symmem__bootstrap_from_attr(const symmem_init_attr_t *attr,
                                            symmem_bootstrap_t *boot_p)
{
    SYMMEM_CHECK(symmem__env_check("init")); /* sizes, numbers, durations: no defaults */
    symmem_bootstrap_t boot;
    memset(&boot, 0, sizeof(boot));
    host_name(boot.host, sizeof(boot.host));
    boot.device = attr->device;

    if (attr->method == SYMMEM_INIT_WITH_MPI_COMM) {
        /* The communicator says who is who; the mpi backend checks it agrees. */
        if (attr->nranks < 1 || attr->nranks > SYMMEM_MAX_PES || attr->rank < 0 ||
            attr->rank >= attr->nranks)
            return symmem__error(SYMMEM_ERR_INVALID,
                                 "init: rank=%d of nranks=%d is no place in a communicator",
                                 attr->rank, attr->nranks);
        char hex[17] = {0};
        random_hex(hex, 16);
        snprintf(boot.job, sizeof(boot.job), "mpi%ld-%s", (long)getpid(), hex);
        boot.rank = attr->rank;
        boot.nranks = attr->nranks;
        boot.have_mpi_comm = 1;
        boot.mpi_comm = attr->mpi_comm;
    } else if (attr->method == SYMMEM_INIT_WITH_UID) {
        uid_layout_t id;
        memcpy(&id, attr->uid.bytes, sizeof(id));
        static const symmem_unique_id_t empty;
        if (memcmp(&attr->uid, &empty, sizeof(empty)) == 0)
            return symmem__error(SYMMEM_ERR_INVALID,
                                 "init: uid is empty (every PE needs the uid that one PE "
                                 "made with get_unique_id())");
        if (attr->nranks < 1 || attr->nranks > SYMMEM_MAX_PES)
            return symmem__error(SYMMEM_ERR_INVALID, "init: nranks=%d is outside [1, %d]",
                                 attr->nranks, SYMMEM_MAX_PES);
        if (attr->rank < 0 || attr->rank >= attr->nranks)
            return symmem__error(SYMMEM_ERR_INVALID, "init: rank=%d is outside [0, nranks=%d)",
                                 attr->rank, attr->nranks);
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
    } else {
        launcher_t launcher;
        SYMMEM_CHECK(from_launcher_env(&boot, &launcher));
        if (launcher == LAUNCHER_NONE) {
            /* No launcher: a world of one PE. */
            char hex[17] = {0};
            random_hex(hex, 16);
            snprintf(boot.job, sizeof(boot.job), "solo%ld-%s", (long)getpid(), hex);
            boot.rank = 0;
            boot.nranks = 1;
        }
        SYMMEM_CHECK(
            spans_hosts(launcher, boot.nranks, boot.spans_hosts, sizeof(boot.spans_hosts)));
    }
    if (symmem__env_flag("SYMMEM_ONE_HOST_PER_PE")) {
        char host[sizeof(boot.host)];
        snprintf(host, sizeof(host), "%.40s/pe%d", boot.host, boot.rank);
        memcpy(boot.host, host, sizeof(host));
    }
    unsigned long long secret[2];
    if (secret_hash(secret)) {
        char job[sizeof(boot.job)];
        snprintf(job, sizeof(job), "%.*s-%016llx", (int)sizeof(job) - 18, boot.job, secret[0]);
        memcpy(boot.job, job, sizeof(job));
    }
    SYMMEM_CHECK(local_rank_from_env(boot.rank, &boot.local_rank));
    SYMMEM_CHECK(local_size_from_env(&boot, &boot.local_size));
    boot.heap_size = symmem__env_size("SYMMEM_SYMMETRIC_SIZE");
    if (boot.heap_size == 0)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "init: SYMMEM_SYMMETRIC_SIZE=%s leaves no symmetric heap",
                             symmem__env_string("SYMMEM_SYMMETRIC_SIZE"));
    boot.timeout = symmem__env_number("SYMMEM_TIMEOUT");
    boot.spin_us = symmem__env_number("SYMMEM_SPIN_US");
    boot.heartbeat = symmem__env_number("SYMMEM_HEARTBEAT_S");
    *boot_p = boot;
    return SYMMEM_OK;
}

/* ---- the job's identity on this host ---- */

/* 1 if process pid's environment (as it was at exec) sets var, 0 if not,
 * -1 if it cannot be read (another user's process, or gone). */
static int environ_has(pid_t pid, const char *var)
{
    char path[64];
    snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return -1;
    size_t len = strlen(var), size = 0, cap = 0;
    char *text = NULL;
    int found = -1;
    for (;;) {
        if (size + 4096 + 1 > cap) {
            char *bigger = realloc(text, cap = 2 * cap + 8192);
            if (bigger == NULL) goto out;
            text = bigger;
        }
        size_t n = fread(text + size, 1, 4096, f);
        size += n;
        if (n < 4096) break;
    }
    if (ferror(f)) goto out;
    text[size] = '\0';
    found = 0;
    for (size_t at = 0; at < size && !found; at += strlen(text + at) + 1)
        found = strncmp(text + at, var, len) == 0 && text[at + len] == '=';
out:
    free(text);
    fclose(f);
    return found;
}

/* The parent of process pid, from /proc/<pid>/stat; 0 if unknown. */
static pid_t parent_of(pid_t pid)
{
    char text[1024];
    const char *fields = symmem__process_stat(pid, text, sizeof(text));
    long parent = 0;
    if (fields == NULL || sscanf(fields, "%*c %ld", &parent) != 1) return 0;
    return (pid_t)parent;
}

/* The process that started this PE: the nearest ancestor whose environment
 * lacks rank_var (the launcher sets it only for its children; a wrapper
 * script between them inherits it), or that we cannot read (a launcher of
 * another user, such as slurmstepd). */
static pid_t launcher_process(const char *rank_var)
{
    pid_t pid = getppid();
    for (int depth = 0; depth < 64 && pid > 1 && environ_has(pid, rank_var) == 1; depth++) {
        pid_t parent = parent_of(pid);
        if (parent <= 0) break;
        pid = parent;
    }
    return pid;
}

void symmem__bootstrap_identity(const symmem_bootstrap_t *boot, symmem_job_identity_t *id_p)
{
    symmem_job_identity_t id;
    memset(&id, 0, sizeof(id));
    symmem_bootstrap_t again;
    memset(&again, 0, sizeof(again));
    launcher_t launcher = LAUNCHER_NONE;
    if (!boot->have_uid) from_launcher_env(&again, &launcher); /* read once already: no error */
    id.named_by = boot->have_uid ? "the unique id" : launchers[launcher].named_by;
    id.launcher = boot->have_uid ? "uid" : launchers[launcher].name;
    unsigned long long secret[2];
    if (secret_hash(secret)) {
        snprintf(id.key, sizeof(id.key), "secret %016llx%016llx", secret[0], secret[1]);
    } else if (boot->have_uid) {
        snprintf(id.key, sizeof(id.key), "uid"); /* the id is the job's secret */
    } else if (launcher == LAUNCHER_NONE) {
        snprintf(id.key, sizeof(id.key), "solo");
    } else {
        pid_t pid = launcher_process(launchers[launcher].rank_var);
        snprintf(id.key, sizeof(id.key), "launcher %ld %llu", (long)pid,
                 (unsigned long long)symmem__process_start_time(pid));
    }
    *id_p = id;
}

/* Which engine runs a job of the gpu backend (engine.h), as
 * SYMMEM_GPU_ENGINE asks:
 *  - nvshmem: NVSHMEM's library loads and every PE of this host has a GPU of
 *    its own (NVSHMEM refuses PEs that share one);
 *  - symmem: the PEs are on one host (they may share GPUs), at most
 *    SYMMEM_ENGINE_MAX_PES of them, on GPUs with CUDA VMM memory that
 *    exports as POSIX file descriptors;
 *  - auto: nvshmem for a job across hosts, and where it can run; else symmem.
 * The choice depends on the job and the host alone, so every PE of a job
 * makes the same one. */
#include <stdio.h>
#include <string.h>

#include "gpu.h"
#include "symmem_engine.h"

enum { ENGINE_AUTO, ENGINE_SYMMEM, ENGINE_NVSHMEM }; /* SYMMEM_GPU_ENGINE's choices, in order */

typedef struct {
    int count;       /* GPUs on this host */
    int across;      /* the job's PEs are on several hosts */
    char where[200]; /* ... which says so */
} job_t;

static void read_job(const symmem_bootstrap_t *boot, job_t *job)
{
    job->count = 0;
    libs.cuDeviceGetCount(&job->count);
    /* the bootstrap's word (SYMMEM_ONE_HOST_PER_PE=1, the test hook, says so too) */
    job->across = boot->spans_hosts[0] != '\0';
    snprintf(job->where, sizeof(job->where), "%s", boot->spans_hosts);
}

/* Whether NVSHMEM can run the job; why not in why. */
static int nvshmem_can(const symmem_bootstrap_t *boot, const job_t *job, char *why, size_t size)
{
    if (libs.nvshmem_handle == NULL) {
        snprintf(why, size, "NVSHMEM does not load: %s", libs.nvshmem_why);
        return 0;
    }
    if (boot->local_size > job->count) {
        snprintf(why, size, "%d PEs on this host but only %d GPUs, and NVSHMEM takes one GPU a PE",
                 boot->local_size, job->count);
        return 0;
    }
    return 1;
}

/* Whether symmem's engine can run the job; why not in why. */
static int symmem_can(const symmem_bootstrap_t *boot, const job_t *job, char *why, size_t size)
{
    if (job->across) {
        snprintf(why, size,
                 "the symmem engine runs the PEs of one host, and this job's are on several "
                 "(%s): SYMMEM_GPU_ENGINE=nvshmem runs it",
                 job->where);
        return 0;
    }
    if (boot->nranks > SYMMEM_ENGINE_MAX_PES) {
        snprintf(why, size,
                 "the symmem engine runs at most %d PEs (its collective kernels' limit), and "
                 "this job has %d: SYMMEM_GPU_ENGINE=nvshmem runs it with a GPU a PE",
                 SYMMEM_ENGINE_MAX_PES, boot->nranks);
        return 0;
    }
    static const char *const theirs[] = {"SYMMEM_GPU_COLLECTIVES", "SYMMEM_GPU_KERNELS"};
    for (size_t i = 0; i < sizeof(theirs) / sizeof(theirs[0]); i++)
        if (strcmp(symmem__gpu_core->env_string(theirs[i]), "nvshmem") == 0) {
            snprintf(why, size,
                     "%s=nvshmem asks for NVSHMEM's kernels, which only the nvshmem engine has",
                     theirs[i]);
            return 0;
        }
    if (symmem__gpu_core->env_string("SYMMEM_GPU_UNMAPPED_PE")[0] != '\0') {
        snprintf(why, size,
                 "SYMMEM_GPU_UNMAPPED_PE plays a PE on another node, which the symmem engine "
                 "never has: it needs SYMMEM_GPU_ENGINE=nvshmem");
        return 0;
    }
    int ordinal = boot->device >= 0 ? boot->device : boot->local_rank % job->count;
    cu_device_t device = -1;
    int vmm = 0, fds = 0;
    if (libs.cuDeviceGet(&device, ordinal) == 0) {
        libs.cuDeviceGetAttribute(&vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
                                  device);
        libs.cuDeviceGetAttribute(
            &fds, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device);
    }
    if (!vmm || !fds) {
        snprintf(why, size, "cuda:%d cannot %s, which the symmem engine's heap is made of", ordinal,
                 !vmm ? "map CUDA VMM memory (cuMemCreate)"
                      : "export CUDA VMM memory as a POSIX file descriptor");
        return 0;
    }
    return 1;
}

/* The engine for boot (its reason in why), or NULL (why not in why). */
const gpu_engine_t *symmem__gpu_engine_choose(const symmem_bootstrap_t *boot, char *why,
                                              size_t size)
{
    job_t job;
    read_job(boot, &job);
    if (job.count < 1 || boot->device >= job.count) {
        snprintf(why, size, "device=%d but this host has %d CUDA devices", boot->device, job.count);
        return NULL;
    }
    int asked = ENGINE_AUTO;
    if (symmem__gpu_core->env_choice("init", "SYMMEM_GPU_ENGINE", &asked) != SYMMEM_OK) {
        snprintf(why, size, "%s", symmem__gpu_core->last_error());
        return NULL;
    }
    char nv_why[800], sym_why[400];
    if (asked == ENGINE_NVSHMEM) {
        if (!nvshmem_can(boot, &job, nv_why, sizeof(nv_why))) {
            snprintf(why, size, "SYMMEM_GPU_ENGINE=nvshmem, but %s%s", nv_why,
                     boot->local_size > job.count
                         ? " (SYMMEM_GPU_ENGINE=symmem lets PEs share a GPU)"
                         : "");
            return NULL;
        }
        snprintf(why, size, "SYMMEM_GPU_ENGINE=nvshmem");
        return &symmem__gpu_nvshmem_engine;
    }
    if (asked == ENGINE_SYMMEM) {
        if (!symmem_can(boot, &job, sym_why, sizeof(sym_why))) {
            snprintf(why, size, "SYMMEM_GPU_ENGINE=symmem, but %s", sym_why);
            return NULL;
        }
        snprintf(why, size, "SYMMEM_GPU_ENGINE=symmem");
        return &symmem__gpu_symmem_engine;
    }
    int nv = nvshmem_can(boot, &job, nv_why, sizeof(nv_why));
    if (job.across) { /* only NVSHMEM reaches other hosts */
        if (!nv) {
            snprintf(why, size,
                     "this job's PEs are on several hosts (%s), which needs the nvshmem engine, "
                     "but %s",
                     job.where, nv_why);
            return NULL;
        }
        snprintf(why, size, "auto: the job's PEs are on several hosts (%s)", job.where);
        return &symmem__gpu_nvshmem_engine;
    }
    if (nv) {
        snprintf(why, size, "auto: NVSHMEM loads and each PE of this host has a GPU of its own");
        return &symmem__gpu_nvshmem_engine;
    }
    if (!symmem_can(boot, &job, sym_why, sizeof(sym_why))) {
        snprintf(why, size, "neither engine can run the job: %s; nor nvshmem: %s", sym_why, nv_why);
        return NULL;
    }
    snprintf(why, size, "auto: %s", nv_why);
    return &symmem__gpu_symmem_engine;
}

int symmem__gpu_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size)
{
    return symmem__gpu_engine_choose(boot, why, why_size) != NULL;
}

void symmem__gpu_engine_slot(gpu_t *g, const symmem_bootstrap_t *boot, char *name, size_t name_size,
                             char *why, size_t why_size)
{
    if (g != NULL) {
        snprintf(name, name_size, "%s", g->engine->name);
        if (why_size > 0) why[0] = '\0';
        return;
    }
    const gpu_engine_t *engine = symmem__gpu_engine_choose(boot, why, why_size);
    snprintf(name, name_size, "%s", engine != NULL ? engine->name : "");
}

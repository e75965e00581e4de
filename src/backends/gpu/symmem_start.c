/* The symmem engine's start and end. start: every PE of the job connects
 * to every other (the host mesh, host_mesh.h), learns which GPU each has
 * (TEAM_SAME_GPU; a GPU that cannot reach another's memory stops the job
 * here), and reserves the heap's window (vmm_heap.h), mapping nothing yet.
 * stop releases it all; final_barrier is a meeting on the mesh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu.h"
#include "symmem_engine.h"

static symmem_status_t connect_all(gpu_t *g)
{
    sym_wait_t w;
    symmem__sym_wait_start(&w, g, "init",
                           "every PE of the job to connect to it (the symmem engine runs the "
                           "PEs of one host: for PEs on several hosts, "
                           "SYMMEM_GPU_ENGINE=nvshmem)",
                           GPU_INIT_TIMEOUT_SECONDS);
    int rc = symmem__mesh_open(&g->sym->mesh, g->boot.job, g->boot.rank, g->boot.nranks, &w.mesh);
    return rc == 0 ? SYMMEM_OK : symmem__sym_mesh_failed(g, &w, rc);
}

/* A GPU's PCI address, which names it in every process of the host. */
static int64_t pci_address(cu_device_t device)
{
    int domain = 0, bus = 0, slot = 0;
    libs.cuDeviceGetAttribute(&domain, CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID, device);
    libs.cuDeviceGetAttribute(&bus, CU_DEVICE_ATTRIBUTE_PCI_BUS_ID, device);
    libs.cuDeviceGetAttribute(&slot, CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID, device);
    return (int64_t)domain << 32 | (int64_t)bus << 8 | (int64_t)slot;
}

/* Whether this PE's GPU reaches GPU address (another PE's); why not in why. */
static int reaches(gpu_t *g, int pe, int64_t address, char *why, size_t size)
{
    int count = 0, can = 0;
    libs.cuDeviceGetCount(&count);
    for (int ordinal = 0; ordinal < count; ordinal++) {
        cu_device_t device = -1;
        if (libs.cuDeviceGet(&device, ordinal) != 0 || pci_address(device) != address) continue;
        if (libs.cuDeviceCanAccessPeer(&can, g->cu_device, device) == 0 && can) return 1;
        snprintf(why, size,
                 "cuda:%d cannot reach the memory of PE %d's GPU (cuda:%d here) by "
                 "peer access",
                 g->device, pe, ordinal);
        return 0;
    }
    snprintf(why, size,
             "PE %d's GPU (PCI %04llx:%02llx:%02llx) is not one this process sees "
             "(CUDA_VISIBLE_DEVICES must show every PE's GPU to every PE)",
             pe, (unsigned long long)(address >> 32), (unsigned long long)(address >> 8 & 0xff),
             (unsigned long long)(address & 0xff));
    return 0;
}

/* Every PE's GPU on every PE; every PE goes on only if every GPU reaches
 * every other's memory. */
static symmem_status_t learn_gpus(gpu_t *g)
{
    symmem_engine_state_t *s = g->sym;
    int n = g->boot.nranks, ok = 1, failed = -1;
    SYMMEM_CHECK(symmem__sym_allgather(g, "init", NULL, 0, pci_address(g->cu_device), s->gpus));
    char why[300] = "";
    for (int pe = 0; pe < n && ok; pe++)
        if (s->gpus[pe] != s->gpus[g->boot.rank])
            ok = reaches(g, pe, s->gpus[pe], why, sizeof(why));
    int64_t oks[n];
    SYMMEM_CHECK(symmem__sym_allgather(g, "init", NULL, 0, ok, oks));
    for (int pe = 0; pe < n && failed < 0; pe++)
        if (!oks[pe]) failed = pe;
    if (!ok) return ERROR(SYMMEM_ERR_BACKEND, "init: %s", why);
    if (failed >= 0)
        return ERROR(SYMMEM_ERR_BACKEND,
                     "init: PE %d's GPU cannot reach another PE's GPU memory (its error says "
                     "why)",
                     failed);
    return SYMMEM_OK;
}

/* Where PEs share a GPU, PE 0 says so, once a process: without CUDA MPS
 * the GPU time-slices their contexts (right, but slow). */
static void say_shared(gpu_t *g)
{
    static int said;
    const int64_t *gpus = g->sym->gpus;
    int n = g->boot.nranks, distinct = 0;
    for (int pe = 0; pe < n; pe++) {
        int first = 1;
        for (int q = 0; q < pe && first; q++) first = gpus[q] != gpus[pe];
        distinct += first;
    }
    if (g->boot.rank != 0 || distinct == n || said) return;
    said = 1;
    fprintf(stderr,
            "symmem: %d PEs share %d GPU%s (the gpu backend's symmem engine): without CUDA MPS "
            "the GPU time-slices them, so they run right but slowly; with the MPS daemon "
            "running their kernels run side by side\n",
            n, distinct, distinct == 1 ? "" : "s");
    fflush(stderr);
}

/* The most the heap may grow to: SYMMEM_SYMMETRIC_SIZE, else the GPU's memory. */
static size_t heap_limit(gpu_t *g)
{
    if (symmem__gpu_core->env_is_set("SYMMEM_SYMMETRIC_SIZE"))
        return symmem__gpu_core->env_size("SYMMEM_SYMMETRIC_SIZE");
    size_t total = 0;
    libs.cuDeviceTotalMem(&total, g->cu_device);
    return total;
}

symmem_status_t symmem__sym_start(gpu_t *g)
{
    int n = g->boot.nranks;
    symmem_engine_state_t *s = calloc(1, sizeof(*s));
    if (s != NULL) {
        s->exchanged = calloc((size_t)n, sizeof(int64_t));
        s->gpus = calloc((size_t)n, sizeof(int64_t));
    }
    g->sym = s;
    if (s == NULL || s->exchanged == NULL || s->gpus == NULL) {
        symmem__sym_stop(g, 0);
        return ERROR(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    }
    s->teams_in_use = (1ULL << SYMMEM_TEAM_FIRST_USER) - 1; /* the predefined ones */
    symmem_status_t status = connect_all(g);
    if (status == SYMMEM_OK) status = learn_gpus(g);
    if (status == SYMMEM_OK) say_shared(g);
    if (status == SYMMEM_OK) {
        cu_result_t rc = libs.cuStreamCreate(&s->peek, CU_STREAM_NON_BLOCKING);
        if (rc != 0) status = symmem__gpu_cuda_error("init", "creating a stream", rc);
    }
    if (status == SYMMEM_OK) status = symmem__vmm_heap_open(g, heap_limit(g));
    if (status != SYMMEM_OK) symmem__sym_stop(g, 0);
    return status;
}

symmem_status_t symmem__sym_stop(gpu_t *g, int finished)
{
    (void)finished; /* the mappings go either way: a peer's memory lives while it is mapped */
    symmem_engine_state_t *s = g->sym;
    if (s == NULL) return SYMMEM_OK;
    while (s->externals != NULL) symmem__vmm_external_close(g, s->externals);
    if (s->alloc != NULL) symmem__vmm_heap_close(g);
    if (s->peek != NULL) libs.cuStreamDestroy(s->peek);
    if (s->wait_module != NULL) libs.cuModuleUnload(s->wait_module);
    if (s->mesh.fds != NULL) symmem__mesh_close(&s->mesh);
    free(s->exchanged);
    free(s->gpus);
    free(s);
    g->sym = NULL;
    return SYMMEM_OK;
}

/* Every PE has come this far (its GPU idle, the call pages' rendezvous
 * made): after it, no PE reads another's memory again. */
symmem_status_t symmem__sym_final_barrier(gpu_t *g)
{
    int64_t values[g->boot.nranks];
    return symmem__sym_allgather(g, "finalize", NULL, 0, 0, values);
}

/* No library of someone else's. */
void symmem__sym_version(gpu_t *g, char *text, size_t size)
{
    (void)g;
    if (size > 0) text[0] = '\0';
}

/* The cpu engine's ops table: lifecycle, memory, one-sided copies, signals. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/bootstrap.h"
#include "../../core/env.h"
#include "../../core/error.h"
#include "cpu.h"
#include "../../core/peer_status.h"
#include "../../core/vocab.h"

/* The steps of malloc's agreement. */
/* Steps of malloc's agreements; align's first step differs from malloc's, so
 * PEs that mix the two calls fail the barrier's check. */
enum { AGREE_MALLOC = 1, AGREE_COMMIT, AGREE_ALIGN_SIZE, AGREE_ALIGNMENT };

/* ---- lifecycle ---- */

static void cpu_destroy(cpu_t *cpu)
{
    symmem__cpu_segments_retire(cpu);
    symmem__heap_allocator_destroy(cpu->allocator);
    free(cpu->heaps);
    free(cpu->world_members);
    free(cpu->crossed_pes);
    free(cpu->crossed_seqs);
    free(cpu);
}

/* The cores this process may run on (taskset, cgroups' cpusets), which may
 * be fewer than the machine's. */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) == 0) return CPU_COUNT(&set);
    return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

static symmem_status_t cpu_init(const symmem_bootstrap_t *boot, symmem_backend_t **backend_p)
{
    symmem_status_t status;
    symmem_job_identity_t id;
    symmem__bootstrap_identity(boot, &id);
    /* Its PEs would wait for peers that start on other hosts: say so now. */
    if (boot->spans_hosts[0] != '\0')
        return symmem__error(SYMMEM_ERR_BOOTSTRAP,
                             "init: the cpu backend runs on one host, but the launcher "
                             "starts this job's %d PEs on several (%s). Start a job per "
                             "host, or use the gpu backend (SYMMEM_BACKEND=gpu, NVSHMEM) "
                             "for PEs on several hosts",
                             boot->nranks, boot->spans_hosts);
    cpu_t *cpu = calloc(1, sizeof(*cpu));
    if (cpu == NULL) return symmem__error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
    cpu->boot = *boot;
    cpu->me = boot->rank;
    cpu->n = boot->nranks;
    cpu->heap_size = boot->heap_size;
    cpu->heap_fd = -1;
    cpu->ctl_fd = -1;
    cpu->oversubscribed = cpu->n > usable_cores();
    cpu->no_check = !symmem__env_flag("SYMMEM_CHECK");
    cpu->heaps = calloc((size_t)cpu->n, sizeof(*cpu->heaps));
    cpu->allocator = symmem__heap_allocator_create(cpu->heap_size);
    cpu->world_members = calloc((size_t)cpu->n, sizeof(int));
    if (cpu->heaps == NULL || cpu->allocator == NULL || cpu->world_members == NULL) {
        status = symmem__error(SYMMEM_ERR_NO_MEMORY, "init: out of host memory");
        goto err_free;
    }
    for (int pe = 0; pe < cpu->n; pe++) cpu->world_members[pe] = pe;
    cpu->world = (symmem_team_view_t){cpu->world_members, cpu->n, cpu->me, 0};
    /* Channels 0..5 belong to the predefined teams. */
    cpu->channels_in_use = (1ULL << SYMMEM_TEAM_FIRST_USER) - 1; /* see cpu_channel */
    /* SYMMEM_TIMEOUT bounds the wait for the other PEs (as any wait's), not
     * the steps that wait for no one (ctl_join). */
    double deadline =
        symmem__cpu_now() + (boot->timeout > 0 ? boot->timeout : CPU_INIT_TIMEOUT_SECONDS);
    SYMMEM_CHECK_GOTO(symmem__cpu_ctl_join(cpu, &id), status, err_free);
    SYMMEM_CHECK_GOTO(symmem__cpu_slot_claim(cpu), status, err_free);
    SYMMEM_CHECK_GOTO(symmem__cpu_heap_create(cpu), status, err_failed);
    symmem__cpu_slot_publish(cpu, PE_JOINED);
    SYMMEM_CHECK_GOTO(symmem__cpu_slots_wait_joined(cpu, deadline), status, err_failed);
    for (int pe = 0; pe < cpu->n; pe++)
        if (pe != cpu->me)
            SYMMEM_CHECK_GOTO(symmem__cpu_heap_map_peer(cpu, pe), status, err_failed);
    /* Everyone has mapped everything: the names are no longer needed. */
    SYMMEM_CHECK_GOTO(symmem__cpu_barrier_world(cpu, SYMMEM_CALL_INIT), status, err_failed);
    symmem__cpu_segments_unlink(cpu, 0);
    close(cpu->ctl_fd);
    cpu->ctl_fd = -1;
    *backend_p = cpu;
    return SYMMEM_OK;
err_failed:
    if (status == SYMMEM_ERR_TIMEOUT) status = symmem__cpu_start_up_timed_out(cpu);
    /* Peers waiting for us learn at once that we will not come. */
    symmem__cpu_slot_publish(cpu, PE_FAILED);
    symmem__cpu_segments_unlink(cpu, 1);
err_free:
    cpu_destroy(cpu);
    return status;
}

/* After a crossed mismatch, the others of its cycle raise it before this PE
 * leaves (they would name its finalize() instead); may fail leaving the
 * runtime initialised. */
/* A device store (njit code) wakes pe as the host calls' stores do. */
static void cpu_device_wake(cpu_t *cpu, int pe)
{
    symmem__cpu_ring(cpu, pe, CPU_WAIT_DATA);
}

static symmem_status_t cpu_prepare_finalize(cpu_t *cpu)
{
    return symmem__cpu_crossed_settle(cpu, "finalize");
}

static symmem_status_t cpu_finalize(cpu_t *cpu)
{
    /* Not a barrier: no other collective can match it. */
    symmem_status_t status = symmem__cpu_leave(cpu);
    cpu_destroy(cpu);
    return status;
}

/* ---- memory ---- */

static void describe_values(char *out, size_t size, const uint64_t *values, int n)
{
    int len = 0;
    for (int pe = 0; pe < n && len < (int)size; pe++)
        len += snprintf(out + len, size - (size_t)len, "%sPE %d: %llu", pe ? ", " : "", pe,
                        (unsigned long long)values[pe]);
}

/* Every PE passed the same value (named what) at this step, or an error. */
static symmem_status_t agree_on(cpu_t *cpu, int step, const char *what, uint64_t value)
{
    uint64_t values[cpu->n];
    char list[512];
    SYMMEM_CHECK(symmem__cpu_agree(cpu, SYMMEM_CALL_MALLOC, step, &cpu->world, value, values));
    for (int pe = 0; pe < cpu->n; pe++) {
        if (values[pe] == value) continue;
        describe_values(list, sizeof(list), values, cpu->n);
        return symmem__error(SYMMEM_ERR_MISMATCH,
                             "malloc: %s must be the same on every PE, but got %s", what, list);
    }
    return SYMMEM_OK;
}

static symmem_status_t cpu_malloc(cpu_t *cpu, size_t size, size_t alignment, void **ptr_p)
{
    uint64_t values[cpu->n];
    SYMMEM_CHECK(agree_on(cpu, alignment ? AGREE_ALIGN_SIZE : AGREE_MALLOC, "size", size));
    if (alignment) SYMMEM_CHECK(agree_on(cpu, AGREE_ALIGNMENT, "alignment", alignment));
    /* every PE's heap starts at a multiple of SYMMEM_CPU_ALIGN_MAX (segment.c) */
    if (alignment > SYMMEM_CPU_ALIGN_MAX)
        return symmem__error(SYMMEM_ERR_INVALID,
                             "malloc: alignment=%zu is more than the cpu "
                             "backend's largest, %zu",
                             alignment, SYMMEM_CPU_ALIGN_MAX);
    if (size == 0) {
        *ptr_p = NULL;
        return SYMMEM_OK;
    }
    size_t offset;
    if (symmem__heap_allocator_alloc(cpu->allocator, size, alignment, &offset) != SYMMEM_OK)
        return symmem__error(SYMMEM_ERR_NO_MEMORY,
                             "malloc: size=%zu does not fit in the symmetric heap (largest "
                             "free block %zu of SYMMEM_SYMMETRIC_SIZE=%zu bytes)",
                             size, symmem__heap_allocator_largest_free(cpu->allocator),
                             cpu->heap_size);
    /* Every PE must have its pages, or no PE keeps the allocation. */
    symmem_status_t committed = symmem__cpu_heap_commit(cpu, offset, size);
    char reason[512];
    snprintf(reason, sizeof(reason), "%s", symmem_last_error());
    symmem_status_t status = symmem__cpu_agree(cpu, SYMMEM_CALL_MALLOC, AGREE_COMMIT, &cpu->world,
                                               committed == SYMMEM_OK, values);
    for (int pe = 0; status == SYMMEM_OK && pe < cpu->n; pe++)
        if (!values[pe])
            status = pe == cpu->me ? symmem__error(SYMMEM_ERR_NO_MEMORY, "%s", reason)
                                   : symmem__error(SYMMEM_ERR_NO_MEMORY,
                                                   "malloc: PE %d could not commit %zu "
                                                   "bytes of shared memory",
                                                   pe, size);
    if (status != SYMMEM_OK) {
        symmem__heap_allocator_free(cpu->allocator, offset);
        return status;
    }
    *ptr_p = cpu->heaps[cpu->me] + offset;
    return SYMMEM_OK;
}

static symmem_status_t cpu_free(cpu_t *cpu, void *ptr)
{
    uint64_t offset = (uint64_t)((char *)ptr - cpu->heaps[cpu->me]);
    uint64_t values[cpu->n];
    char list[512];
    SYMMEM_CHECK(symmem__cpu_agree(cpu, SYMMEM_CALL_FREE, 1, &cpu->world, offset, values));
    for (int pe = 0; pe < cpu->n; pe++) {
        if (values[pe] == offset) continue;
        describe_values(list, sizeof(list), values, cpu->n);
        return symmem__error(SYMMEM_ERR_MISMATCH,
                             "free: every PE must free the same allocation, but the heap "
                             "offsets freed were %s",
                             list);
    }
    size_t size = symmem__heap_allocator_free(cpu->allocator, offset);
    symmem__cpu_heap_release(cpu, offset, size);
    return SYMMEM_OK;
}

static void *cpu_ptr(cpu_t *cpu, const void *ptr, int pe)
{
    return cpu_peer(cpu, ptr, pe);
}

/* ---- one-sided copies: synchronous, so nbi, quiet and fence are trivial ---- */

static symmem_status_t cpu_put(cpu_t *cpu, void *dst, const void *src, size_t nbytes, int pe,
                               symmem_stream_t stream)
{
    (void)stream;
    char *target = cpu_peer(cpu, dst, pe);
    if (pe == cpu->me)
        memmove(target, src, nbytes); /* may overlap */
    else
        symmem__cpu_copy(target, src, nbytes, nbytes);
    /* A waiter on PE pe may be watching this memory (wait_until). */
    atomic_thread_fence(memory_order_release);
    symmem__cpu_ring(cpu, pe, CPU_WAIT_DATA);
    return SYMMEM_OK;
}

static symmem_status_t cpu_get(cpu_t *cpu, void *dst, const void *src, size_t nbytes, int pe,
                               symmem_stream_t stream)
{
    (void)stream;
    const char *source = cpu_peer(cpu, src, pe);
    if (pe == cpu->me)
        memmove(dst, source, nbytes);
    else
        symmem__cpu_copy(dst, source, nbytes, nbytes);
    atomic_thread_fence(memory_order_acquire);
    return SYMMEM_OK;
}

static symmem_status_t cpu_quiet(cpu_t *cpu, symmem_stream_t stream)
{
    (void)cpu;
    (void)stream;
    atomic_thread_fence(memory_order_seq_cst);
    return SYMMEM_OK;
}

static symmem_status_t cpu_fence(cpu_t *cpu, symmem_stream_t stream)
{
    (void)cpu;
    (void)stream;
    atomic_thread_fence(memory_order_seq_cst);
    return SYMMEM_OK;
}

/* ---- signals ---- */

static symmem_status_t cpu_put_signal(cpu_t *cpu, void *dst, const void *src, size_t nbytes,
                                      uint64_t *sig, uint64_t value, symmem_signal_op_t op, int pe,
                                      int nbi, symmem_stream_t stream)
{
    (void)nbi;
    (void)stream;
    if (nbytes > 0) {
        char *target = cpu_peer(cpu, dst, pe);
        if (pe == cpu->me)
            memmove(target, src, nbytes);
        else
            symmem__cpu_copy(target, src, nbytes, nbytes);
    }
    _Atomic uint64_t *remote = (_Atomic uint64_t *)cpu_peer(cpu, sig, pe);
    /* release: a PE that acquires the new signal value sees the data. */
    if (op == SYMMEM_SIGNAL_SET)
        atomic_store_explicit(remote, value, memory_order_release);
    else
        atomic_fetch_add_explicit(remote, value, memory_order_release);
    symmem__cpu_ring(cpu, pe, CPU_WAIT_DATA);
    return SYMMEM_OK;
}

static int compare_u64(uint64_t a, symmem_cmp_t cmp, uint64_t b)
{
    int holds;
    SYMMEM__COMPARE_AS(uint64_t, a, cmp, b, &holds);
    return holds;
}

static int compare_i64(int64_t a, symmem_cmp_t cmp, int64_t b)
{
    int holds;
    SYMMEM__COMPARE_AS(int64_t, a, cmp, b, &holds);
    return holds;
}

/* An element being waited on, and the condition. */
typedef struct {
    void *ivar;
    symmem_dtype_t dtype;
    symmem_cmp_t cmp;
    int64_t value;
    uint64_t seen;
} element_wait_t;

/* Loads the element (acquire) and tests the condition in its own type. */
static int element_ready(void *arg)
{
    element_wait_t *w = arg;
    switch (w->dtype) {
#define CASE(DT, T, CMP, WIDE)                                                                     \
    case DT: {                                                                                     \
        T v = __atomic_load_n((T *)w->ivar, __ATOMIC_ACQUIRE);                                     \
        w->seen = (uint64_t)v;                                                                     \
        return CMP((WIDE)v, w->cmp, (WIDE)(T)w->value);                                            \
    }
/* the integer dtypes of the vocabulary, each compared in its own type */
#define INTEGER_CASE(NAME, name, code, size, ctype, nvshmem, kind) KIND_##kind(code, ctype)
#define KIND_INT(code, T) CASE(code, T, compare_i64, int64_t)
#define KIND_UINT(code, T) CASE(code, T, compare_u64, uint64_t)
#define KIND_BOOL(code, T)
#define KIND_FLOAT(code, T)
#define KIND_HALF(code, T)
        SYMMEM_DTYPES(INTEGER_CASE)
#undef CASE
    default: return 0;
    }
}

static void element_pending(void *arg, char *out, size_t size)
{
    element_wait_t *w = arg;
    snprintf(out, size, "waiting for value %s %lld, last seen %llu", symmem__cmp_operator(w->cmp),
             (long long)w->value, (unsigned long long)w->seen);
}

static symmem_status_t cpu_signal_wait_until(cpu_t *cpu, uint64_t *sig, symmem_cmp_t cmp,
                                             uint64_t value, symmem_stream_t stream,
                                             uint64_t *value_p)
{
    (void)stream;
    element_wait_t w = {sig, SYMMEM_DTYPE_UINT64, cmp, (int64_t)value, 0};
    SYMMEM_CHECK(symmem__cpu_wait(cpu, "signal_wait", CPU_WAIT_DATA, element_ready, element_pending,
                                  NULL, &w, 0));
    if (value_p) *value_p = w.seen;
    return SYMMEM_OK;
}

static symmem_status_t cpu_signal_fetch(cpu_t *cpu, const uint64_t *sig, uint64_t *value_p)
{
    (void)cpu;
    *value_p = __atomic_load_n(sig, __ATOMIC_ACQUIRE);
    return SYMMEM_OK;
}

static symmem_status_t cpu_wait_until(cpu_t *cpu, void *ivar, symmem_dtype_t dtype,
                                      symmem_cmp_t cmp, int64_t value)
{
    element_wait_t w = {ivar, dtype, cmp, value, 0};
    return symmem__cpu_wait(cpu, "wait_until", CPU_WAIT_DATA, element_ready, element_pending, NULL,
                            &w, 0);
}

static symmem_status_t cpu_test(cpu_t *cpu, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                int64_t value, int *result_p)
{
    (void)cpu;
    element_wait_t w = {ivar, dtype, cmp, value, 0};
    *result_p = element_ready(&w);
    return SYMMEM_OK;
}

static void cpu_heap_range(cpu_t *cpu, uintptr_t *start_p, size_t *size_p)
{
    *start_p = (uintptr_t)cpu->heaps[cpu->me];
    *size_p = cpu->heap_size;
}

static int cpu_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size)
{
    (void)boot, (void)why, (void)why_size;
    return 1; /* anywhere with shared memory */
}

static int cpu_device(cpu_t *cpu)
{
    (void)cpu;
    return -1; /* host memory */
}

/* ---- synchronisation ---- */

static symmem_status_t cpu_barrier_all(cpu_t *cpu, symmem_stream_t stream)
{
    (void)stream;
    return symmem__cpu_barrier_world(cpu, SYMMEM_CALL_BARRIER_ALL);
}

static symmem_status_t cpu_sync_all(cpu_t *cpu, symmem_stream_t stream)
{
    (void)stream;
    return symmem__cpu_barrier_world(cpu, SYMMEM_CALL_SYNC_ALL);
}

const symmem_backend_ops_t symmem__cpu_backend_ops = {
    .version = SYMMEM_BACKEND_OPS_VERSION,
    .name = "cpu",
    .init = cpu_init,
    .finalize = cpu_finalize,
    .malloc = cpu_malloc,
    .free = cpu_free,
    .ptr = cpu_ptr,
    .put = cpu_put,
    .get = cpu_get,
    .put_nbi = cpu_put, /* copies complete at once: nbi is put */
    .get_nbi = cpu_get,
    .quiet = cpu_quiet,
    .fence = cpu_fence,
    .put_signal = cpu_put_signal,
    .signal_wait_until = cpu_signal_wait_until,
    .signal_fetch = cpu_signal_fetch,
    .wait_until = cpu_wait_until,
    .test = cpu_test,
    .barrier_all = cpu_barrier_all,
    .sync_all = cpu_sync_all,
    .team_split_strided = symmem__cpu_team_split_strided,
    .team_split_2d = symmem__cpu_team_split_2d,
    .team_destroy = symmem__cpu_team_destroy,
    .barrier = symmem__cpu_team_barrier,
    .sync = symmem__cpu_team_sync,
    .reduce = symmem__cpu_reduce,
    .reducescatter = symmem__cpu_reducescatter,
    .alltoall = symmem__cpu_alltoall,
    .fcollect = symmem__cpu_fcollect,
    .broadcast = symmem__cpu_broadcast,
    .atomic = symmem__cpu_atomic,
    .device = cpu_device,
    .get_unique_id = symmem__cpu_unique_id,
    .heap_range = cpu_heap_range,
    .team_init = symmem__cpu_team_init,
    .can_run = cpu_can_run,
    .register_external = symmem__unsupported_register_external,
    .unregister_external = symmem__unsupported_unregister_external,
    .library_version = symmem__no_library_version,
    .prepare_finalize = cpu_prepare_finalize,
    .device_state = symmem__no_device_state,
    .cuda_module = symmem__unsupported_cuda_module,
    .predefined_team = symmem__one_host_predefined_team,
    .device_wake = cpu_device_wake,
    .engine = symmem__one_engine,
    /* host memory every PE maps: loads and stores, which never wait */
    .capabilities = SYMMEM_CAP_PEER_LOAD_STORE | SYMMEM_CAP_HOST_RMA,
};

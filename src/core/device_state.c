/* The device state block (device_state.h): filled at init from the runtime and the
 * backend's peer mappings, cleared at finalize, never moved. */
#include "device_state.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "error.h"
#include "state.h"

/* The layout's own checks are symmem/device_layout.h's; the team table
 * has an entry for every team handle. */
_Static_assert(SYMMEM_DEV_MAX_TEAMS == SYMMEM_TEAM_MAX, "the device team table");

static symmem_device_state_t state;
static uint64_t gpu_state; /* the backend's device copy, 0 if none */

symmem_device_state_t *symmem__device_state(void)
{
    return &state;
}

uint64_t symmem__device_state_gpu(void)
{
    return gpu_state;
}

symmem_status_t symmem__device_state_fill(void)
{
    symmem_runtime_t *rt = &symmem__rt;
    uint64_t *peers = calloc((size_t)rt->n_pes, sizeof(*peers));
    if (peers == NULL)
        return symmem__error(SYMMEM_ERR_NO_MEMORY,
                             "init: cannot allocate the device state's "
                             "peer table (%d PEs)",
                             rt->n_pes);
    uintptr_t base = 0;
    size_t size = 0;
    rt->ops->heap_range(rt->be, &base, &size);
    for (int pe = 0; pe < rt->n_pes; pe++)
        peers[pe] = (uint64_t)(uintptr_t)rt->ops->ptr(rt->be, (const void *)base, pe);
    free(state.peer_base);
    state.version = SYMMEM_DEVICE_STATE_VERSION;
    /* Host memory (device -1): njit code may load and store through it. */
    state.flags = rt->ops->device(rt->be) < 0 && base != 0 ? SYMMEM_DEVICE_HOST_MAPPED : 0;
    state.my_pe = rt->my_pe;
    state.n_pes = rt->n_pes;
    state.heap_base = base;
    state.heap_size = size;
    state.peer_base = peers;
    __atomic_store_n(&state.abort_pe, -1, __ATOMIC_RELAXED);
    __atomic_store_n(&state.abort_flag, 0, __ATOMIC_RELAXED);
    state.abort_word = &state.abort_flag;
    state.sync_base = 0;
    state.timeout_ns = (uint64_t)(symmem__env_number("SYMMEM_TIMEOUT") * 1e9);
    state.error = 0;
    state.teams = NULL;
    /* The backend's copy for its kernels (the gpu one makes its own sync
     * area, abort word and error record; the cpu one has none). */
    symmem_status_t status = rt->ops->device_state(rt->be, &state, &gpu_state);
    if (status != SYMMEM_OK) {
        symmem__device_state_clear();
        return status;
    }
    /* release: code that sees the magic (acquire) sees the fields above. */
    __atomic_store_n(&state.magic, SYMMEM_DEVICE_STATE_MAGIC, __ATOMIC_RELEASE);
    return SYMMEM_OK;
}

/* Whether [at, at + nbytes) and [start, start + size) overlap. */
static int overlaps(uintptr_t at, size_t nbytes, uintptr_t start, size_t size)
{
    return start != 0 && at < start + size && start < at + nbytes;
}

int symmem__heap_mapped_at(const void *ptr, size_t nbytes)
{
    /* acquire: pairs with the release store of magic in fill, after which
     * the heap's range and the peer table are read here. */
    if (__atomic_load_n(&state.magic, __ATOMIC_ACQUIRE) != SYMMEM_DEVICE_STATE_MAGIC || nbytes == 0)
        return 0;
    uintptr_t at = (uintptr_t)ptr;
    if (overlaps(at, nbytes, (uintptr_t)state.heap_base, state.heap_size)) return 1;
    for (int32_t pe = 0; pe < state.n_pes; pe++)
        if (overlaps(at, nbytes, (uintptr_t)state.peer_base[pe], state.heap_size)) return 1;
    return 0;
}

void symmem__device_state_clear(void)
{
    __atomic_store_n(&state.magic, 0, __ATOMIC_RELEASE);
    gpu_state = 0;
    uint64_t *peers = state.peer_base;
    memset(&state, 0, sizeof(state));
    state.my_pe = state.n_pes = -1;
    free(peers);
}

void symmem__device_state_disown(void)
{
    __atomic_store_n(&state.magic, 0, __ATOMIC_RELEASE);
}

void symmem__device_state_abort(int pe)
{
    int32_t none = -1;
    __atomic_compare_exchange_n(&state.abort_pe, &none, pe, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    /* release: pairs with the acquire load of abort_flag in a device spin,
     * which then reads abort_pe. */
    __atomic_store_n(&state.abort_flag, 1, __ATOMIC_RELEASE);
}

void symmem__device_wake(int32_t pe)
{
    symmem_runtime_t *rt = &symmem__rt;
    if (rt->initialized && pe >= 0 && pe < rt->n_pes) rt->ops->device_wake(rt->be, pe);
}

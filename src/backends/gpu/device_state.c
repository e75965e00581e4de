/* The device state block for kernels on this PE's GPU (src/core/device_state.h,
 * read by include/symmem/device.cuh): a copy of the host's block in
 * device memory at an address fixed for the process, pointing at
 * - a peer table (device memory): where each PE's heap is mapped on this GPU;
 * - a team table (device memory): every team's members, by handle;
 * - a sync area on the symmetric heap for device syncs: n_pes + 1 words per
 *   team handle; then the flags of symmem's own collectives (own_collectives.c),
 *   a part per team handle;
 * - the push reduces' staging on the symmetric heap (SYMMEM_GPU_STAGING
 *   bytes for each of the first SYMMEM_COLL_STAGED_TEAMS team handles);
 * - an abort word and an error record in host memory the GPU can read and
 *   write, so that a thread of ours can end a kernel waiting on a dead peer
 *   (the abort word) and report why a kernel trapped (the error record).
 * The thread (watch_loop) runs from init to finalize. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../core/device_state.h"
#include "gpu.h"

#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02

/* What lives as long as the process: kernels compiled once keep these
 * addresses, across finalize and a later init on the same GPU. */
typedef struct {
    uint32_t abort[2];           /* {flag, pe}: the abort word */
    symmem_device_error_t error; /* symmem/device_layout.h's */
} host_words_t;

static struct {
    int device;              /* -1 until made */
    cu_deviceptr_t block;    /* the state block's device copy */
    host_words_t *words;     /* pinned, mapped into the GPU */
    cu_deviceptr_t words_at; /* their device address */
} fixed = {-1, 0, NULL, 0};

/* Made once per process, in the device's primary context, which keeps one
 * more reference so that a finalize never frees them. */
static symmem_status_t make_fixed(gpu_t *g)
{
    if (fixed.device == g->device) return SYMMEM_OK;
    if (fixed.device >= 0)
        return ERROR(SYMMEM_ERR_UNSUPPORTED,
                     "init: device code already ran on GPU %d in this process; a later init on "
                     "GPU %d cannot give kernels a new device state block",
                     fixed.device, g->device);
    cu_context_t ctx;
    CU("init", libs.cuDevicePrimaryCtxRetain(&ctx, g->cu_device));
    CU("init", libs.cuMemAlloc(&fixed.block,
                               SYMMEM_DEVICE_CONSTS_COPY_OFFSET + sizeof(symmem_device_consts_t)));
    CU("init", libs.cuMemsetD8(fixed.block, 0,
                               SYMMEM_DEVICE_CONSTS_COPY_OFFSET + sizeof(symmem_device_consts_t)));
    void *words = NULL;
    CU("init", libs.cuMemHostAlloc(&words, sizeof(host_words_t),
                                   CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
    fixed.words = words;
    CU("init", libs.cuMemHostGetDevicePointer(&fixed.words_at, words, 0));
    fixed.device = g->device;
    return symmem__gpu_consts_attach_copy(fixed.block + SYMMEM_DEVICE_CONSTS_COPY_OFFSET);
}

/* Writes the block's copy from the host's: this GPU's view of every heap
 * (heap_lo and heap_hi grow as the engine hands out more). */
static symmem_status_t write_block(gpu_t *g)
{
    int n = g->boot.nranks;
    uint64_t peers[n];
    for (int pe = 0; pe < n; pe++)
        peers[pe] = pe == g->unmapped_pe
                        ? 0
                        : (uint64_t)(uintptr_t)g->engine->ptr(g, (const void *)g->heap_lo, pe);
    CU("init", libs.cuMemcpy(g->device_peers, (cu_deviceptr_t)peers, sizeof(peers)));
    symmem_device_state_t copy = g->device_state;
    copy.heap_base = g->heap_lo;
    copy.heap_size = g->heap_hi - g->heap_lo;
    copy.peer_base = (uint64_t *)g->device_peers;
    copy.abort_word = (const volatile uint32_t *)fixed.words_at;
    copy.sync_base = (uint64_t)(uintptr_t)g->sync_area;
    copy.error = fixed.words_at + offsetof(host_words_t, error);
    copy.teams = (const symmem_device_team_t *)(uintptr_t)g->device_teams;
    copy.magic = SYMMEM_DEVICE_STATE_MAGIC;
    CU("init", libs.cuMemcpy(fixed.block, (cu_deviceptr_t)&copy, sizeof(copy)));
    return symmem__gpu_consts_update(g, peers);
}

/* ---- the team table: SYMMEM_TEAM_MAX entries, then a row of n_pes
 * members for each ---- */

static size_t team_table_bytes(int n)
{
    return SYMMEM_TEAM_MAX * (sizeof(symmem_device_team_t) + sizeof(int32_t) * (size_t)n);
}

static size_t team_sync_bytes(int n)
{
    return (size_t)SYMMEM_DEVICE_TEAM_SYNC_BYTES(n);
}

symmem_status_t symmem__gpu_device_team_set(gpu_t *g, int handle, const int *members, int n)
{
    if (g->device_teams == 0 || handle < 0 || handle >= SYMMEM_TEAM_MAX) return SYMMEM_OK;
    symmem__gpu_own_team_set(g, handle, members, n);
    int npes = g->boot.nranks;
    cu_deviceptr_t row = g->device_teams + SYMMEM_TEAM_MAX * sizeof(symmem_device_team_t) +
                         sizeof(int32_t) * (size_t)npes * (size_t)handle;
    symmem_device_team_t entry = {n, -1, (const int32_t *)(uintptr_t)row};
    int32_t copy[n];
    for (int i = 0; i < n; i++) {
        copy[i] = members[i];
        if (members[i] == g->boot.rank) entry.me = i;
    }
    cu_deviceptr_t slots =
        (cu_deviceptr_t)(uintptr_t)g->sync_area + team_sync_bytes(npes) * (size_t)handle;
    cu_deviceptr_t flags = (cu_deviceptr_t)(uintptr_t)g->own_flags +
                           (size_t)SYMMEM_COLL_TEAM_FLAG_BYTES * (size_t)handle;
    cu_result_t rc = libs.cuMemcpy(row, (cu_deviceptr_t)(uintptr_t)copy, sizeof(copy));
    if (rc == 0) rc = libs.cuMemsetD8(slots, 0, team_sync_bytes(npes));
    if (rc == 0) rc = libs.cuMemsetD8(flags, 0, SYMMEM_COLL_TEAM_FLAG_BYTES);
    if (rc == 0)
        rc = libs.cuMemcpy(g->device_teams + sizeof(entry) * (size_t)handle,
                           (cu_deviceptr_t)(uintptr_t)&entry, sizeof(entry));
    /* The zeroes are in memory before the members meet (the engine's
     * team_meet, init's last exchange): a peer's first arrival here, after
     * that meeting, is never wiped by a memset still queued (PEs that share
     * a GPU run each other's work in any order). */
    if (rc == 0) rc = libs.cuStreamSynchronize((nv_stream_t)0);
    return rc == 0 ? SYMMEM_OK
                   : symmem__gpu_cuda_error("team", "writing the device team table", rc);
}

void symmem__gpu_device_team_forget(gpu_t *g, int handle)
{
    if (g->device_teams == 0 || handle < 0 || handle >= SYMMEM_TEAM_MAX) return;
    symmem_device_team_t none = {0, -1, NULL};
    libs.cuMemcpy(g->device_teams + sizeof(none) * (size_t)handle, (cu_deviceptr_t)(uintptr_t)&none,
                  sizeof(none));
}

/* The predefined teams this PE is in, as NVSHMEM placed them. */
static symmem_status_t set_predefined_teams(gpu_t *g)
{
    symmem_status_t status = SYMMEM_OK;
    for (int team = 0; team < SYMMEM_TEAM_FIRST_USER && status == SYMMEM_OK; team++)
        if (g->predefined[team].n > 0)
            status = symmem__gpu_device_team_set(g, team, g->predefined[team].members,
                                                 g->predefined[team].n);
    return status;
}

static void report(gpu_t *g, const symmem_device_error_t *e)
{
    char call[sizeof(e->call) + 1];
    memcpy(call, e->call, sizeof(e->call));
    call[sizeof(e->call)] = '\0';
    char why[160];
    switch (e->what) {
    case SYMMEM_DEV_ERR_BAD_PE:
        snprintf(why, sizeof(why), "pe %d is not a PE (n_pes is %d)", e->pe, g->boot.nranks);
        break;
    case SYMMEM_DEV_ERR_NOT_SYMMETRIC:
        snprintf(why, sizeof(why),
                 "argument %d (address 0x%llx) is not symmetric memory (to PE %d)", e->arg,
                 (unsigned long long)e->value, e->pe);
        break;
    case SYMMEM_DEV_ERR_PEER_DEAD:
        snprintf(why, sizeof(why), "PE %d died while the kernel waited", e->pe);
        break;
    case SYMMEM_DEV_ERR_TIMEOUT:
        snprintf(why, sizeof(why), "timed out after %.1f s (SYMMEM_TIMEOUT)",
                 (double)e->value / 1e9);
        break;
    case SYMMEM_DEV_ERR_NOT_CONTIGUOUS:
        snprintf(why, sizeof(why),
                 "argument %d is a strided view (stride %llu bytes); device "
                 "copies take contiguous arrays",
                 e->arg, (unsigned long long)e->value);
        break;
    case SYMMEM_DEV_ERR_BAD_TEAM:
        snprintf(why, sizeof(why),
                 "team %lld is not a team PE %d is in (team_destroy'ed, "
                 "never made, or made without this PE)",
                 (long long)e->value, e->pe);
        break;
    case SYMMEM_DEV_ERR_TOO_SMALL:
        snprintf(why, sizeof(why), "argument %d is too small: the call needs %llu bytes there",
                 e->arg, (unsigned long long)e->value);
        break;
    case SYMMEM_DEV_ERR_BAD_ROOT:
        snprintf(why, sizeof(why), "root %lld is not a PE of the team (it has %d)",
                 (long long)e->value, e->pe);
        break;
    case SYMMEM_DEV_ERR_BAD_ARG:
        snprintf(why, sizeof(why),
                 "argument %d has the value %lld, which the call does not "
                 "take",
                 e->arg, (long long)e->value);
        break;
    case SYMMEM_DEV_ERR_UNREACHABLE:
        snprintf(why, sizeof(why),
                 "PE %d has no peer mapping on this GPU (another node): "
                 "device calls reach the PEs of this NVLink domain; use the host calls for it",
                 e->pe);
        break;
    case SYMMEM_DEV_ERR_OVERLAP:
        snprintf(why, sizeof(why),
                 "dst (0x%llx) overlaps src without being it: reduce works "
                 "in place with dst == src, reducescatter into this PE's own part of src",
                 (unsigned long long)e->value);
        break;
    default: snprintf(why, sizeof(why), "symmem is not initialised");
    }
    fprintf(stderr,
            "[pe %d] symmem: a kernel stopped in the device call %s: %s; the kernel trapped "
            "and this process's CUDA context is unusable\n",
            g->boot.rank, call, why);
    fflush(stderr);
}

#define WATCH_PERIOD_NS 20000000LL /* the watch looks every 20 ms */

/* Every period: a peer that died sets the abort word (device waits then
 * trap), an error a kernel left is printed once, and stream collectives
 * that wait for each other end (stuck.c). */
static void *watch_loop(void *arg)
{
    gpu_t *g = arg;
    libs.cuCtxSetCurrent(g->ctx); /* stuck.c launches a kernel from here */
    do {
        char how[256];
        if (fixed.words->abort[0] == 0) {
            int dead =
                symmem__gpu_peer_watch_find_dead(&g->watch, symmem__gpu_core, how, sizeof(how));
            if (dead >= 0) {
                __atomic_store_n(&fixed.words->abort[1], (uint32_t)dead, __ATOMIC_RELAXED);
                /* release: the pe before the flag; a kernel reads the flag,
                 * then the pe (both from host memory, uncached). */
                __atomic_store_n(&fixed.words->abort[0], 1u, __ATOMIC_RELEASE);
            }
        }
        /* acquire: pairs with the kernel's fence before it stores set = 1 */
        if (!g->device_error_reported &&
            __atomic_load_n(&fixed.words->error.set, __ATOMIC_ACQUIRE) == 1u) {
            report(g, &fixed.words->error);
            g->device_error_reported = 1;
        }
        symmem__gpu_stuck_watch(g);
        /* a pause, not a sleep: finalize would wait out up to a period (20
         * ms of a 1-PE job's 143 ms start and end on an H100) */
    } while (!symmem__pause_for(&g->device_watch_pause, WATCH_PERIOD_NS));
    return NULL;
}

/* SYMMEM_GPU_UNMAPPED_PE=<pe>, for tests: kernels of the other PEs see PE
 * pe as a PE on another node (no peer mapping), which no machine here has;
 * on PE pe itself it changes nothing. */
static symmem_status_t read_unmapped_pe(gpu_t *g)
{
    const char *text = symmem__gpu_core->env_string("SYMMEM_GPU_UNMAPPED_PE");
    char *end = NULL;
    long pe = strtol(text, &end, 10);
    g->unmapped_pe = -1;
    if (text[0] == '\0') return SYMMEM_OK;
    if (*end != '\0' || pe < 0 || pe >= g->boot.nranks)
        return ERROR(SYMMEM_ERR_INVALID,
                     "init: SYMMEM_GPU_UNMAPPED_PE='%s' is not a PE "
                     "number (0 to %d)",
                     text, g->boot.nranks - 1);
    g->unmapped_pe = pe == g->boot.rank ? -1 : (int)pe;
    return SYMMEM_OK;
}

/* Collective, like the sync area: the same sizes on every PE, so either
 * every PE has staging or none has (NVSHMEM's heap is as full everywhere);
 * without it the push reduces pull (own_collectives.c). Only where
 * SYMMEM_GPU_COLLECTIVES asks for a push reduce: the default table does not
 * use them yet, and a failed nvshmem_malloc can leave NVSHMEM unusable, so
 * nobody else pays the 8 team parts of heap or that risk. (The symmem
 * engine's heap fails alike on every PE: its PEs agree on each growth.) */
static void make_staging(gpu_t *g)
{
    size_t blocks = symmem__gpu_core->env_size("SYMMEM_GPU_PUSH_BLOCKS");
    g->push_blocks = blocks < 1                        ? 1
                     : blocks > SYMMEM_COLL_MAX_BLOCKS ? SYMMEM_COLL_MAX_BLOCKS
                                                       : (unsigned)blocks;
    g->stage_bytes = symmem__gpu_core->env_size("SYMMEM_GPU_STAGING") / 32 * 32; /* halves: packs */
    g->stage_area = NULL;
    if (g->collectives_mode != SYMMEM_GPU_COLLECTIVES_PUSH_ONE_SHOT &&
        g->collectives_mode != SYMMEM_GPU_COLLECTIVES_PUSH_TWO_SHOT)
        g->stage_bytes = 0;
    if (g->stage_bytes == 0) return;
    size_t bytes = g->stage_bytes * SYMMEM_COLL_STAGED_TEAMS;
    if (symmem__gpu_heap_take(g, "init", bytes, 0, &g->stage_area) != SYMMEM_OK &&
        symmem__gpu_core->env_flag("SYMMEM_DEBUG"))
        fprintf(stderr,
                "symmem: [pe %d] init: %zu bytes of symmetric heap for the push reduces' "
                "staging failed (SYMMEM_GPU_STAGING; %s); they pull instead\n",
                g->boot.rank, bytes, symmem__gpu_core->last_error());
}

symmem_status_t symmem__gpu_device_state(gpu_t *g, const symmem_device_state_t *host,
                                         uint64_t *device_addr_p)
{
    scope_t scope = symmem__gpu_enter(g);
    symmem_status_t status = read_unmapped_pe(g);
    if (status == SYMMEM_OK) status = make_fixed(g);
    int n = g->boot.nranks;
    /* Collective (every PE is here, at the end of init): the sync area. */
    size_t syncs = team_sync_bytes(n) * SYMMEM_TEAM_MAX;
    size_t sync_bytes = syncs + (size_t)SYMMEM_COLL_TEAM_FLAG_BYTES * SYMMEM_TEAM_MAX;
    if (status == SYMMEM_OK)
        status = symmem__gpu_heap_take(g, "init", sync_bytes, 0, &g->sync_area);
    if (status == SYMMEM_OK) {
        uintptr_t at = (uintptr_t)g->sync_area;
        g->own_flags = (char *)g->sync_area + syncs; /* own_collectives.c's */
        cu_result_t rc = libs.cuMemsetD8((cu_deviceptr_t)at, 0, sync_bytes);
        if (rc == 0) rc = libs.cuMemAlloc(&g->device_peers, sizeof(uint64_t) * (size_t)n);
        if (rc == 0) rc = libs.cuMemAlloc(&g->device_teams, team_table_bytes(n));
        if (rc == 0) rc = libs.cuMemsetD8(g->device_teams, 0, team_table_bytes(n));
        if (rc != 0) status = symmem__gpu_cuda_error("init", "making the device sync area", rc);
    }
    if (status == SYMMEM_OK) make_staging(g);
    if (status == SYMMEM_OK) status = set_predefined_teams(g);
    if (status == SYMMEM_OK) {
        memset(fixed.words, 0, sizeof(*fixed.words));
        g->device_state = *host;
        g->device_state.timeout_ns = (uint64_t)(g->boot.timeout * 1e9);
        g->device_abort_word = fixed.words_at;
        g->device_error = fixed.words_at + offsetof(host_words_t, error);
        status = write_block(g);
    }
    /* Everyone's sync area is zero before anyone's kernel can arrive there. */
    int64_t ignored[n];
    if (status == SYMMEM_OK) status = symmem__gpu_exchange(g, "init", 0, ignored);
    if (status == SYMMEM_OK) status = symmem__gpu_stuck_start(g);
    if (status == SYMMEM_OK) {
        g->device_error_reported = 0;
        int paused = symmem__pause_init(&g->device_watch_pause) == 0;
        if (!paused || pthread_create(&g->device_watch, NULL, watch_loop, g) != 0) {
            if (paused) symmem__pause_destroy(&g->device_watch_pause);
            symmem__gpu_stuck_stop(g);
            status = ERROR(SYMMEM_ERR_BACKEND, "init: cannot start the device watch thread");
        } else
            g->device_watching = 1;
    }
    *device_addr_p = status == SYMMEM_OK ? (uint64_t)fixed.block : 0;
    g->state_block = status == SYMMEM_OK ? fixed.block : 0;
    return symmem__gpu_leave(g, scope, status);
}

symmem_status_t symmem__gpu_device_state_update(gpu_t *g)
{
    return g->device_peers != 0 ? write_block(g) : SYMMEM_OK;
}

void symmem__gpu_device_state_release(gpu_t *g)
{
    if (g->device_watching) {
        symmem__pause_stop(&g->device_watch_pause);
        pthread_join(g->device_watch, NULL);
        symmem__pause_destroy(&g->device_watch_pause);
        g->device_watching = 0;
        /* One last look: a kernel that failed just before finalize. */
        if (!g->device_error_reported &&
            __atomic_load_n(&fixed.words->error.set, __ATOMIC_ACQUIRE) == 1u)
            report(g, &fixed.words->error);
        symmem__gpu_stuck_stop(g);
    }
    symmem__gpu_consts_invalidate();
    if (fixed.block != 0) {
        uint64_t zero = 0; /* magic 0: a kernel launched after finalize fails loudly */
        libs.cuMemcpy(fixed.block, (cu_deviceptr_t)&zero, sizeof(zero));
    }
    if (g->device_peers != 0) libs.cuMemFree(g->device_peers);
    if (g->device_teams != 0) libs.cuMemFree(g->device_teams);
    g->device_peers = g->device_teams = 0;
    g->sync_area = NULL; /* finalize frees it */
}

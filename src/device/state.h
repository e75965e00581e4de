/* The device state block: what code running outside the library's calls
 * (njit functions on the cpu backend; GPU kernels later) needs to reach the
 * symmetric heap by itself: who we are, where every PE's heap is mapped
 * here, and whether a peer died. One block per process at a fixed address
 * (a static), so compiled code may bake that address in as a constant; its
 * contents are valid while magic == SYMMEM_DEVICE_STATE_MAGIC (between init
 * and finalize). Everything is a fixed-size field, so the gpu backend can
 * copy the same struct into device memory (peer_base then pointing into that
 * copy); the layout is exported to Python (_symmem.DEVICE_STATE_LAYOUT). */
#ifndef SYMMEM_DEVICE_STATE_H
#define SYMMEM_DEVICE_STATE_H

#include <stdint.h>

#include "symmem/symmem.h"

#define SYMMEM_DEVICE_STATE_MAGIC 0x3156454d4d4d5953ULL /* "SYMMMEV1" */
#define SYMMEM_DEVICE_STATE_VERSION 3u

/* One team as device collectives see it (device.cuh's symmem_device_team):
 * n == 0 where the handle is no team of this PE. */
typedef struct symmem_device_team {
    int32_t n;              /* members */
    int32_t me;             /* this PE's index among them */
    const int32_t *members; /* [n]: world PE of team PE i */
} symmem_device_team_t;

/* flags */
#define SYMMEM_DEVICE_HOST_MAPPED 1u /* heaps are host memory this process can load from */

typedef struct symmem_device_state {
    uint64_t magic;        /* SYMMEM_DEVICE_STATE_MAGIC while initialised, else 0 */
    uint32_t version;      /* SYMMEM_DEVICE_STATE_VERSION */
    uint32_t flags;        /* SYMMEM_DEVICE_* */
    int32_t my_pe;
    int32_t n_pes;
    uint64_t heap_base;    /* this PE's heap: [heap_base, heap_base + heap_size) */
    uint64_t heap_size;
    uint64_t *peer_base;   /* [n_pes]: where PE pe's heap is mapped in this process */
    /* Non-zero once a peer is known dead (abort_pe: which, -1 unknown). Set
     * with release by whoever learns it; inline spins read it with acquire. */
    uint32_t abort_flag;
    int32_t abort_pe;
    /* Version 2, for GPU kernels (python/symmem/device/device.cuh). */
    const volatile uint32_t *abort_word; /* {flag, pe} that device waits read: &abort_flag
                                          * here, host-mapped memory on the gpu */
    uint64_t sync_base;  /* this PE's device sync area (symmetric), 0 if none */
    uint64_t timeout_ns; /* SYMMEM_TIMEOUT for device waits; 0: none */
    uint64_t error;      /* where a failing kernel leaves its error (device.cuh's
                          * symmem_device_error), 0 if none */
    /* Version 3: [SYMMEM_TEAM_MAX], indexed by team handle, for device team
     * syncs and collectives (gpu; NULL on the cpu, whose njit code calls
     * the C engine). Team h's part of the sync area is
     * sync_base + h * (n_pes + 1) * 8. */
    const symmem_device_team_t *teams;
} symmem_device_state_t;

/* What a device call's fast path reads, copied by the gpu backend into the
 * constant bank of each loaded module that links device.cuh (its
 * symmem_device_consts_t, symbol SYMMEM_DEVICE_CONSTS): the constant cache
 * keeps it across the fences that empty L1, where the block above is read
 * through L1. magic as the block's while current, 0 otherwise. */
#define SYMMEM_DEVICE_CONSTS "symmem_device_consts"
#define SYMMEM_DEVICE_CONST_PEERS 1024
typedef struct symmem_device_consts {
    uint64_t magic;
    int32_t my_pe, n_pes;
    uint64_t heap_base, heap_end; /* every allocation so far lies in [base, end) */
    uint64_t sync_base;
    int32_t peers, unused;        /* delta's entries: min(n_pes, CONST_PEERS) */
    /* PE pe's copy of symmetric x is at x + delta[pe]; odd: not mapped here */
    uint64_t delta[SYMMEM_DEVICE_CONST_PEERS];
} symmem_device_consts_t;

/* On the gpu, the device copy of the state block is followed, at this
 * offset in the same allocation, by a copy of symmem_device_consts_t in
 * plain device memory, kept as current as the modules' copies: for kernels
 * that cannot hold a constant of ours (Triton's, symmem.device.triton). */
#define SYMMEM_DEVICE_CONSTS_COPY_OFFSET 128

/* The block itself; its address never changes. */
symmem_device_state_t *symmem__device_state(void);
/* Fills the block for the runtime that has just been initialised. */
symmem_status_t symmem__device_state_fill(void);
/* Marks the block invalid (magic 0) and frees its peer table; at finalize. */
void symmem__device_state_clear(void);
/* Marks the block invalid (magic 0) and frees nothing: in a child forked
 * after init (core/forked.h), which is no PE. */
void symmem__device_state_disown(void);
/* The same block for kernels on the backend's GPU: its device address, 0
 * on the cpu backend (whose njit code reads the block above). */
uint64_t symmem__device_state_gpu(void);
/* Records that pe (or -1) died: later device waits end at once. */
void symmem__device_state_abort(int pe);

#endif

/*
 * The memory layout the host and the GPU share, written once: the device
 * state block, its team table and constant state (src/core/device_state.h fills
 * them; device.cuh's calls read them), the error record a failing kernel
 * leaves, the team sync area, and the flag area and argument block of the
 * gpu backend's own collective kernels (src/backends/gpu/kernels/).
 *
 * C and CUDA C include it: the host library, device.cuh, the kernels the
 * gpu backend compiles with NVRTC (which has no system headers: no
 * <stdint.h>, no offsetof). The asserts at the end hold in every compiler
 * that reads this file (NVRTC checks the sizes, the others the offsets too),
 * so a field that moves fails the build, not a kernel. Triton and Numba
 * code cannot include it: the extension exports the numbers
 * (_symmem.DEVICE_LAYOUT, src/extension/device.c) and
 * tests/python/test_device_layout.py compares. A change of layout is a new
 * SYMMEM_DEVICE_STATE_VERSION.
 */
#ifndef SYMMEM_DEVICE_LAYOUT_H
#define SYMMEM_DEVICE_LAYOUT_H

#if defined(__CUDACC__)
typedef unsigned long long symmem_dev_u64;
typedef unsigned int symmem_dev_u32;
typedef int symmem_dev_i32;
#else
#include <stdint.h>
typedef uint64_t symmem_dev_u64;
typedef uint32_t symmem_dev_u32;
typedef int32_t symmem_dev_i32;
#endif

/* ---- the device state block ---- */

#define SYMMEM_DEVICE_STATE_MAGIC 0x3156454d4d4d5953ULL /* "SYMMMEV1" */
#define SYMMEM_DEVICE_STATE_VERSION 3u

/* flags */
#define SYMMEM_DEVICE_HOST_MAPPED 1u /* heaps are host memory this process can load from */

/* Entries of the team table, by team handle: symmem.h's SYMMEM_TEAM_MAX. */
#define SYMMEM_DEV_MAX_TEAMS 64

/* One team as device collectives see it: n == 0 where the handle is no
 * team of this PE. */
typedef struct symmem_device_team {
    symmem_dev_i32 n;              /* members */
    symmem_dev_i32 me;             /* this PE's index among them */
    const symmem_dev_i32 *members; /* [n]: world PE of team PE i */
} symmem_device_team_t;

typedef struct symmem_device_state {
    symmem_dev_u64 magic;   /* SYMMEM_DEVICE_STATE_MAGIC while initialised, else 0 */
    symmem_dev_u32 version; /* SYMMEM_DEVICE_STATE_VERSION */
    symmem_dev_u32 flags;   /* SYMMEM_DEVICE_* */
    symmem_dev_i32 my_pe;
    symmem_dev_i32 n_pes;
    symmem_dev_u64 heap_base; /* this PE's heap: [heap_base, heap_base + heap_size) */
    symmem_dev_u64 heap_size;
    symmem_dev_u64 *peer_base; /* [n_pes]: where PE pe's heap is mapped in this process */
    /* Non-zero once a peer is known dead (abort_pe: which, -1 unknown). Set
     * with release by whoever learns it; inline spins read it with acquire.
     * The host's copy: kernels read abort_word. */
    symmem_dev_u32 abort_flag;
    symmem_dev_i32 abort_pe;
    /* Version 2, for GPU kernels (device.cuh). */
    const volatile symmem_dev_u32 *abort_word; /* {flag, pe} that device waits read: &abort_flag
                                                * here, host-mapped memory on the gpu */
    symmem_dev_u64 sync_base;  /* this PE's device sync area (symmetric), 0 if none */
    symmem_dev_u64 timeout_ns; /* SYMMEM_TIMEOUT for device waits; 0: none */
    symmem_dev_u64 error;      /* where a failing kernel leaves its error
                                * (symmem_device_error_t), 0 if none */
    /* Version 3: [SYMMEM_DEV_MAX_TEAMS], indexed by team handle, for device
     * team syncs and collectives (gpu; NULL on the cpu, whose njit code
     * calls the C engine). */
    const symmem_device_team_t *teams;
} symmem_device_state_t;

/* ---- the team sync area: from sync_base, one part per team handle ----
 *
 * Team h's part is SYMMEM_DEVICE_TEAM_SYNC_BYTES(n_pes) bytes at sync_base
 * + h * SYMMEM_DEVICE_TEAM_SYNC_BYTES(n_pes) (symmetric; zeroed on every
 * member before the team is used): word 0 counts the syncs this PE finished
 * on the team, word 1 + i is the last epoch team PE i announced here. */
#define SYMMEM_DEVICE_SYNC_WORD 8
#define SYMMEM_DEVICE_TEAM_SYNC_BYTES(n_pes) (8ull * (symmem_dev_u64)((n_pes) + 1))

/* ---- the constant state ----
 *
 * What a device call's fast path reads, copied by the gpu backend into the
 * constant bank of each loaded module that links device.cuh (its
 * __constant__ of this type, the symbol SYMMEM_DEVICE_CONSTS): the constant
 * cache keeps it across the fences that empty L1, where the state block is
 * read through L1. magic as the block's while current, 0 otherwise. */
#define SYMMEM_DEVICE_CONSTS "symmem_device_consts"
#define SYMMEM_DEVICE_CONST_PEERS 1024
typedef struct symmem_device_consts {
    symmem_dev_u64 magic;
    symmem_dev_i32 my_pe, n_pes;
    symmem_dev_u64 heap_base, heap_end; /* every allocation so far lies in [base, end) */
    symmem_dev_u64 sync_base;           /* this PE's sync area */
    symmem_dev_i32 peers, unused;       /* delta's entries: min(n_pes, CONST_PEERS) */
    /* PE pe's copy of symmetric x is at x + delta[pe]; odd: not mapped here */
    symmem_dev_u64 delta[SYMMEM_DEVICE_CONST_PEERS];
} symmem_device_consts_t;

/* On the gpu, the device copy of the state block is followed, at this
 * offset in the same allocation, by a copy of symmem_device_consts_t in
 * plain device memory, kept as current as the modules' copies: for kernels
 * that cannot hold a constant of ours (Triton's, symmem.device.triton). */
#define SYMMEM_DEVICE_CONSTS_COPY_OFFSET 128

/* ---- the error record ----
 *
 * What a failed device call leaves for the host before it traps: the first
 * failure claims it (set 0 -> 2 by compare-and-swap), writes the fields,
 * fences, then sets set = 1, which the gpu backend's watch thread reads
 * with acquire and reports, naming the call and the PE. */
typedef struct symmem_device_error {
    symmem_dev_u32 set;   /* 1 once written (first failure wins) */
    symmem_dev_i32 what;  /* SYMMEM_DEV_ERR_* */
    symmem_dev_i32 pe;    /* the PE named: the bad or dead one */
    symmem_dev_i32 arg;   /* which argument (0-based), -1 none */
    symmem_dev_u64 value; /* the bad value */
    char call[32];        /* the device call, NUL-padded */
} symmem_device_error_t;

#define SYMMEM_DEV_ERR_BAD_PE 1
#define SYMMEM_DEV_ERR_NOT_SYMMETRIC 2
#define SYMMEM_DEV_ERR_PEER_DEAD 3
#define SYMMEM_DEV_ERR_TIMEOUT 4
#define SYMMEM_DEV_ERR_NOT_INITIALIZED 5
#define SYMMEM_DEV_ERR_NOT_CONTIGUOUS 6
#define SYMMEM_DEV_ERR_BAD_TEAM 7
#define SYMMEM_DEV_ERR_TOO_SMALL 8
#define SYMMEM_DEV_ERR_BAD_ROOT 9
#define SYMMEM_DEV_ERR_BAD_ARG 10
#define SYMMEM_DEV_ERR_UNREACHABLE 11
#define SYMMEM_DEV_ERR_OVERLAP 12

/* A device wait looks at the abort word and the clock every this many spins. */
#define SYMMEM_DEV_SPINS 1024

/* symmem_dev_wait_set's how: which of NVSHMEM's waits on a set of
 * variables (wait_until_all, _any, _some), plus TEST for its test (one
 * look, no wait: test_all, _any, _some). */
#define SYMMEM_DEV_WAIT_ALL 0
#define SYMMEM_DEV_WAIT_ANY 1
#define SYMMEM_DEV_WAIT_SOME 2
#define SYMMEM_DEV_WAIT_TEST 4

/* ---- the gpu backend's own collectives (src/backends/gpu/kernels/) ---- */

#define SYMMEM_COLL_MAX_PES 8      /* members of a team they serve: one NVLink domain */
#define SYMMEM_COLL_MAX_BLOCKS 256 /* blocks of a launch */
#define SYMMEM_COLL_THREADS 512    /* threads of a block */

/* Each PE's part of the flag area for one team (symmetric, zeroed before
 * the team's first collective): the epoch of each block (a word at 8 *
 * block), then an arrival word per block and member (SYNC_BYTES in all);
 * then the one-phase reduce's mailboxes, two (by the epoch's parity) for
 * each member, each holding LL_MAX_BYTES of data as 4-byte halves of 8-byte
 * words whose other half is the epoch; then the staging sequence of each
 * block (a word at STAGE_SEQ_AT(block): the rounds the push reduces have
 * run through the team's staging buffer, the same in every word once a
 * launch ends). The flag area holds one part per team handle. */
#define SYMMEM_COLL_SYNC_BYTES (8u * SYMMEM_COLL_MAX_BLOCKS * (1u + SYMMEM_COLL_MAX_PES))
#define SYMMEM_COLL_LL_MAX_BYTES 4096u
#define SYMMEM_COLL_LL_SLOT_BYTES (2u * SYMMEM_COLL_LL_MAX_BYTES)
#define SYMMEM_COLL_MAILBOX_BYTES (2u * SYMMEM_COLL_MAX_PES * SYMMEM_COLL_LL_SLOT_BYTES)
#define SYMMEM_COLL_TEAM_FLAG_BYTES                                                                \
    (SYMMEM_COLL_SYNC_BYTES + SYMMEM_COLL_MAILBOX_BYTES + 8u * SYMMEM_COLL_MAX_BLOCKS)
/* Where in a team's part block b's arrival word for member pe is, and the
 * mailbox of parity p that member from writes. */
#define SYMMEM_COLL_ARRIVAL_AT(block, pe)                                                          \
    (8ull * (SYMMEM_COLL_MAX_BLOCKS + (symmem_dev_u64)(block) * SYMMEM_COLL_MAX_PES +              \
             (symmem_dev_u64)(pe)))
#define SYMMEM_COLL_MAILBOX_AT(parity, from)                                                       \
    (SYMMEM_COLL_SYNC_BYTES +                                                                      \
     ((symmem_dev_u64)(parity) * SYMMEM_COLL_MAX_PES + (symmem_dev_u64)(from)) *                   \
         SYMMEM_COLL_LL_SLOT_BYTES)

#define SYMMEM_COLL_STAGE_SEQ_AT(block)                                                            \
    (SYMMEM_COLL_SYNC_BYTES + SYMMEM_COLL_MAILBOX_BYTES + 8ull * (symmem_dev_u64)(block))

/* The push reduces' staging buffer (kernels/stage.cuh): symmetric, one part
 * of SYMMEM_GPU_STAGING bytes per team handle below STAGED_TEAMS (other
 * teams reduce by pulling). A part is two halves of stage_half bytes each
 * (by the staging sequence's parity); a launch of G blocks cuts a half into
 * G block regions, each region into n slots of slot bytes (slot: a multiple
 * of 16, G * n * slot <= stage_half), slot k holding what member k sent:
 *   half h, block b, from k: h * stage_half + (b * n + k) * slot. */
#define SYMMEM_COLL_STAGED_TEAMS 8

typedef struct symmem_coll_ptrs {
    symmem_dev_u64 p[SYMMEM_COLL_MAX_PES];
} symmem_coll_ptrs_t;

/* The argument block every own collective kernel takes (by value, as a
 * __grid_constant__). src, dst and flags: each member's, as mapped here;
 * mine: this PE's part of the flag area for the team; count: elements
 * (reduce) or bytes of a piece (move); the move kernels copy pieces first
 * .. first + pieces - 1 (mod n), piece q from member q's src + src_step *
 * me to this PE's dst + dst_step * q; packed: src and dst allow 16-byte
 * packs; abort_word, error, timeout_ns: the state block's; call: the
 * call's name for the error record. The push reduces: stage, each member's
 * staging part for the team as mapped here; stage_half and slot, the bytes
 * of a half and of a slot; scatter, 1 for reducescatter (src holds n parts
 * of count elements). */
typedef struct symmem_coll_args {
    symmem_coll_ptrs_t src, dst, flags, stage;
    symmem_dev_u64 mine, count, abort_word, error, timeout_ns, src_step, dst_step;
    symmem_dev_u64 stage_half, slot;
    symmem_dev_i32 n, me, first, pieces, packed, scatter;
    char call[16];
} symmem_coll_args_t;

/* ---- the checks: NVRTC has no offsetof, so it checks the sizes only ---- */

#if defined(__cplusplus)
#define SYMMEM_LAYOUT_ASSERT(what) static_assert(what, "device_layout.h: " #what)
#else
#define SYMMEM_LAYOUT_ASSERT(what) _Static_assert(what, "device_layout.h: " #what)
#endif
#if defined(__CUDACC_RTC__)
#define SYMMEM_LAYOUT_AT(type, field, at) SYMMEM_LAYOUT_ASSERT(sizeof(type) > (at))
#else
#define SYMMEM_LAYOUT_AT(type, field, at)                                                          \
    SYMMEM_LAYOUT_ASSERT(__builtin_offsetof(type, field) == (at))
#endif

SYMMEM_LAYOUT_ASSERT(sizeof(symmem_dev_u64) == 8 && sizeof(void *) == 8);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_device_team_t) == 16);
SYMMEM_LAYOUT_AT(symmem_device_team_t, me, 4);
SYMMEM_LAYOUT_AT(symmem_device_team_t, members, 8);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_device_state_t) == 96);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_device_state_t) <= SYMMEM_DEVICE_CONSTS_COPY_OFFSET);
SYMMEM_LAYOUT_AT(symmem_device_state_t, version, 8);
SYMMEM_LAYOUT_AT(symmem_device_state_t, flags, 12);
SYMMEM_LAYOUT_AT(symmem_device_state_t, my_pe, 16);
SYMMEM_LAYOUT_AT(symmem_device_state_t, n_pes, 20);
SYMMEM_LAYOUT_AT(symmem_device_state_t, heap_base, 24);
SYMMEM_LAYOUT_AT(symmem_device_state_t, heap_size, 32);
SYMMEM_LAYOUT_AT(symmem_device_state_t, peer_base, 40);
SYMMEM_LAYOUT_AT(symmem_device_state_t, abort_flag, 48);
SYMMEM_LAYOUT_AT(symmem_device_state_t, abort_pe, 52);
SYMMEM_LAYOUT_AT(symmem_device_state_t, abort_word, 56);
SYMMEM_LAYOUT_AT(symmem_device_state_t, sync_base, 64);
SYMMEM_LAYOUT_AT(symmem_device_state_t, timeout_ns, 72);
SYMMEM_LAYOUT_AT(symmem_device_state_t, error, 80);
SYMMEM_LAYOUT_AT(symmem_device_state_t, teams, 88);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_device_consts_t) == 48 + 8 * SYMMEM_DEVICE_CONST_PEERS);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, my_pe, 8);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, n_pes, 12);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, heap_base, 16);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, heap_end, 24);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, sync_base, 32);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, peers, 40);
SYMMEM_LAYOUT_AT(symmem_device_consts_t, delta, 48);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_device_error_t) == 56);
SYMMEM_LAYOUT_AT(symmem_device_error_t, what, 4);
SYMMEM_LAYOUT_AT(symmem_device_error_t, pe, 8);
SYMMEM_LAYOUT_AT(symmem_device_error_t, arg, 12);
SYMMEM_LAYOUT_AT(symmem_device_error_t, value, 16);
SYMMEM_LAYOUT_AT(symmem_device_error_t, call, 24);
SYMMEM_LAYOUT_ASSERT(sizeof(symmem_coll_args_t) ==
                     4 * 8 * SYMMEM_COLL_MAX_PES + 9 * 8 + 6 * 4 + 16);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, stage, 3 * 8 * SYMMEM_COLL_MAX_PES);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, mine, 4 * 8 * SYMMEM_COLL_MAX_PES);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, stage_half, 4 * 8 * SYMMEM_COLL_MAX_PES + 7 * 8);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, slot, 4 * 8 * SYMMEM_COLL_MAX_PES + 8 * 8);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, n, 4 * 8 * SYMMEM_COLL_MAX_PES + 9 * 8);
SYMMEM_LAYOUT_AT(symmem_coll_args_t, call, 4 * 8 * SYMMEM_COLL_MAX_PES + 9 * 8 + 6 * 4);
SYMMEM_LAYOUT_ASSERT(SYMMEM_COLL_TEAM_FLAG_BYTES % 16 == 0);

#endif

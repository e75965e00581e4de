/*
 * The gpu backend: the ops table over one of two engines (engine.h):
 * NVIDIA's NVSHMEM host library, or symmem's own for the PEs of one host.
 * Every data-moving slot enqueues on the caller's CUDA stream; with no
 * stream it uses the backend's own stream and completes before returning.
 * Host memory on the private side of a put or get is staged through a
 * device buffer. The calling thread's CUDA context is switched to the
 * backend's device for each call and switched back after it.
 *
 * This is the folder's private header: the backend's state, the two globals
 * every file shares, and what the files call in one another. One concept per
 * file: context.c, start.c, memory.c, rma.c, signals.c, collectives.c,
 * teams.c, atomics.c (with nvshmem_atomics.c and nvrtc.c), external.c, and
 * ops.c with the table, own_buffers.c; the engines' own files (nvshmem_*.c;
 * symmem_*.c, vmm_heap.c, host_mesh.c) and engine_choice.c; the GPU programs (CUDA and
 * PTX, embedded at build time) are in kernels/.
 */
#ifndef SYMMEM_GPU_H
#define SYMMEM_GPU_H

#include <stddef.h>
#include <stdint.h>

#include <pthread.h>

#include "../../core/backend.h"
#include "../../core/device_state.h"
#include "../../core/error.h" /* SYMMEM_CHECK and _GOTO; messages go through core->error */
#include "../../core/vocab.h" /* dtype sizes and NVSHMEM names, op words, comparisons */
#include "call_page.h"
#include "engine.h"
#include "kernels/programs.h"
#include "libs.h"
#include "pause.h"
#include "peer_watch.h"

#define GPU_SCRATCH_BYTES (1 << 20)    /* host memory is staged in chunks of this size */
#define GPU_INIT_TIMEOUT_SECONDS 120.0 /* PEs that never meet at init, without SYMMEM_TIMEOUT */

/* SYMMEM_GPU_COLLECTIVES's choices, in its order */
enum {
    SYMMEM_GPU_COLLECTIVES_AUTO, /* symmem: own kernels; reduce one-shot or two-shot by size */
    SYMMEM_GPU_COLLECTIVES_NVSHMEM,
    SYMMEM_GPU_COLLECTIVES_ONE_SHOT,
    SYMMEM_GPU_COLLECTIVES_TWO_SHOT,
    SYMMEM_GPU_COLLECTIVES_PUSH_ONE_SHOT,
    SYMMEM_GPU_COLLECTIVES_PUSH_TWO_SHOT
};

/* own_collectives.c: a team as symmem's collective kernels see it. */
typedef struct {
    int usable;                          /* every member's flags are mapped here */
    uintptr_t part;                      /* this PE's flags for the team */
    uint64_t flags[SYMMEM_COLL_MAX_PES]; /* each member's, as mapped here */
    int staged;                          /* and its staging part: the push reduces run */
    uint64_t stage[SYMMEM_COLL_MAX_PES]; /* each member's staging part, as mapped here */
} own_team_t;

/* stuck.c: collectives on streams that wait for each other on the GPU */
typedef struct {
    void *module, *kernel;    /* the kernel that traps */
    nv_stream_t stream;       /* its stream, ordered after nothing */
    double next_check, since; /* since: when the cycle now seen was first seen; 0 */
    uint64_t progress;        /* symmem__gpu_calls_progress then */
    int stopped;              /* the GPU's work was stopped: once */
    int mismatch_seen;        /* a mismatch was raised: the job ends anyway */
} gpu_stuck_t;

struct symmem_engine_state; /* symmem_engine.h */

struct symmem_backend {
    symmem_bootstrap_t boot;
    const gpu_engine_t *engine;      /* who starts the job and maps the heap */
    struct symmem_engine_state *sym; /* the symmem engine's state; NULL under nvshmem */
    int device;                      /* the CUDA ordinal */
    cu_device_t cu_device;           /* its driver handle, to release the context with */
    cu_context_t ctx;                /* the device's primary context, retained by init */
    nv_stream_t stream;              /* for calls made without a stream */
    cu_deviceptr_t scratch;          /* stages host memory */
    int64_t *agree_in;               /* symmetric: this PE's value for an agreement */
    int64_t *agree_all;              /* symmetric: every PE's value */
    void *atomics;                   /* CUmodule of the PTX atomics */
    void *nvshmem_atomics;           /* CUmodule of NVSHMEM's, built at the first use; NULL */
    int collectives_mode;            /* SYMMEM_GPU_COLLECTIVES: SYMMEM_GPU_COLLECTIVES_* */
    void *own_flags;                 /* symmetric: own collectives' flags, a part per team handle */
    void *stage_area;                /* symmetric: the push reduces' staging, a part per team
                               * handle below SYMMEM_COLL_STAGED_TEAMS; NULL: none */
    size_t stage_bytes;              /* SYMMEM_GPU_STAGING: a part's bytes */
    unsigned push_blocks;            /* SYMMEM_GPU_PUSH_BLOCKS: the push reduces' largest grid */
    own_team_t own_teams[SYMMEM_TEAM_MAX];
    struct {
        void *module, *kernels[5]; /* one_shot, two_shot, ll_reduce, push_one_shot, push_two_shot */
    } reduce_kernels[SYMMEM_DTYPE_COUNT][SYMMEM_OP_COUNT]; /* compiled at their first use */
    void *move_module;            /* compiled at the first byte-moving collective or sync */
    void *move_kernels[11];       /* move16 .. move1, sync_only, push16 .. push1 */
    void *put_signal;             /* CUmodule of the PTX put_signal */
    void *put_signal_kernels[17]; /* by element width in bytes: 1, 4, 8, 16 */
    unsigned max_blocks;          /* a put_signal grid: two blocks per multiprocessor */
    int nvshmem_kernels;          /* SYMMEM_GPU_KERNELS=nvshmem: never our kernels */
    uintptr_t heap_lo;            /* the span of the symmetric heap handed out so far, all */
    uintptr_t heap_hi;            /* of it device memory (NVSHMEM reserves its heap once) */
    peer_watch_t watch;           /* which peers still run */
    heartbeat_t heartbeat;        /* the PEs on other hosts: start.c starts it */
    /* device_state.c: what kernels of symmem.device reach */
    symmem_device_state_t device_state; /* the host's block, as init gave it */
    cu_deviceptr_t device_peers;        /* the device copy's peer table */
    /* where kernels read the abort word and leave an error record (device
     * addresses of pinned host memory; own_collectives.c passes them on) */
    uint64_t device_abort_word, device_error;
    cu_deviceptr_t state_block;     /* the device state block's copy (device.cuh's st) */
    int unmapped_pe;                /* SYMMEM_GPU_UNMAPPED_PE (tests): as if on another node; -1 */
    cu_deviceptr_t device_teams;    /* its team table, then every team's members */
    void *sync_area;                /* symmetric: device syncs' arrivals, per team */
    pthread_t device_watch;         /* sets the abort word, reports kernels' errors */
    gpu_pause_t device_watch_pause; /* between its looks; finalize's stop ends it at once */
    int device_watching, device_error_reported;
    gpu_calls_t calls; /* call pages: this PE's and its same-host peers' */
    int *world;        /* 0 .. n-1: TEAM_WORLD's members */
    /* NVSHMEM's predefined teams (teams.c): members[n]; n = 0, not in it */
    struct {
        int n;
        int *members;
    } predefined[SYMMEM_TEAM_FIRST_USER];
    int check;    /* SYMMEM_CHECK: compare fingerprints */
    int npending; /* stream calls not yet compared with every peer */
    gpu_call_ref_t pending[GPU_CALL_RING];
    gpu_stuck_t stuck; /* the device watch thread's, but mismatch_seen */
};

/* ---- ops.c: set when the core opens the backend ---- */
extern const symmem_core_services_t *symmem__gpu_core;
extern gpu_libs_t symmem__gpu_libs;
/* The driver and NVSHMEM are called through the table on nearly every line
 * of this folder: `libs.cuMemcpy(...)` reads as the call it is. */
#define libs symmem__gpu_libs

/* Every failure is written once, where it is detected, through the core. */
#define ERROR(status, ...) symmem__gpu_core->error((status), __VA_ARGS__)

/* Returns the error of a failed driver call, naming the call and expr. */
#define CU(call_name, expr)                                                                        \
    do {                                                                                           \
        cu_result_t _rc = (expr);                                                                  \
        if (_rc != 0) return symmem__gpu_cuda_error(call_name, #expr, _rc);                        \
    } while (0)

/* ---- context.c: what every call does around its work ---- */
double symmem__gpu_now(void);
symmem_status_t symmem__gpu_cuda_error(const char *call, const char *what, cu_result_t rc);
/* The caller's context, put back by leave. */
typedef struct {
    cu_context_t saved;
} scope_t;
scope_t symmem__gpu_enter(gpu_t *g);
/* Puts the caller's context back; returns status, so a slot can end with
 * return symmem__gpu_leave(g, scope, status). */
symmem_status_t symmem__gpu_leave(gpu_t *g, scope_t scope, symmem_status_t status);
/* What a call on a stream does first: enters (*scope_p, for leave) and picks
 * the stream to enqueue on (*s_p); *blocking_p says whether to drain it
 * after. kind: the collective's (SYMMEM_CALL_NONE for one-sided calls), for
 * graphs.c. SYMMEM_ERR_INVALID, naming call, for a stream of another GPU
 * (then the caller's context is back already). */
symmem_status_t symmem__gpu_begin(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                  symmem_stream_t stream, scope_t *scope_p, nv_stream_t *s_p,
                                  int *blocking_p);
/* Waits for the backend's stream, spinning for the first millisecond. */
symmem_status_t symmem__gpu_drain(gpu_t *g, const char *call);
/* The error for a wait whose stream failed: the dead peer it waited for
 * (its kernel trapped on the abort word) where there is one. */
symmem_status_t symmem__gpu_wait_failed(gpu_t *g, const char *call, const char *what,
                                        cu_result_t rc);
/* Asked by a waiting PE, acting a few times a second: an error once a peer
 * has died or SYMMEM_TIMEOUT has passed since started; what names what the
 * PE waits for, in words. */
symmem_status_t symmem__gpu_still_waiting(gpu_t *g, const char *call, const char *what,
                                          double started, double *next_check_p);
/* ---- liveness.c: init's steps that learn which peers run ---- */
/* Every PE's host and pid, for the pid checks of same-host peers. */
symmem_status_t symmem__gpu_watch_peers(gpu_t *g);
/* Where any PE is on another host: the heartbeat to PE 0 (collective). */
symmem_status_t symmem__gpu_heartbeat_start(gpu_t *g);
/* Undoes heartbeat_start; finished: every PE has reached finalize. */
void symmem__gpu_heartbeat_stop(gpu_t *g, int finished);
/* ---- watched.c: calls with no time limit of their own ---- */
/* Runs *rc_p = func(arg) on a helper thread with the backend's context while
 * the caller waits, bounded by SYMMEM_TIMEOUT and the peers; what says, in
 * words, what the wait is for. On a timeout the call stays running. */
symmem_status_t symmem__gpu_run_watched(gpu_t *g, const char *call, const char *what,
                                        int (*func)(void *arg), void *arg, int *rc_p);
/* Waits until every stream of this PE's device is idle (kernels and graphs
 * the program launched included). */
symmem_status_t symmem__gpu_wait_device_idle(gpu_t *g, const char *call);
/* run_watched for an NVSHMEM call that holds a barrier (nvshmem_call names
 * it); once one is abandoned, nvshmem_wedged says so for good. */
symmem_status_t symmem__gpu_nvshmem_watched(gpu_t *g, const char *call, const char *nvshmem_call,
                                            int (*func)(void *arg), void *arg);
int symmem__gpu_nvshmem_wedged(void);

/* ---- stuck.c: stream collectives that wait for each other on the GPU ---- */
/* The trapping kernel and its stream (init, before the device watch thread
 * starts), and their release. */
symmem_status_t symmem__gpu_stuck_start(gpu_t *g);
void symmem__gpu_stuck_stop(gpu_t *g);
/* From the device watch thread, often: stops this PE's GPU work once a
 * cycle of collectives through it has stood still long enough. */
void symmem__gpu_stuck_watch(gpu_t *g);
/* A mismatch was raised on this PE (the job must end): stuck_watch stands down. */
void symmem__gpu_stuck_mismatch_seen(gpu_t *g);

/* ---- graphs.c: CUDA graphs that captured symmem calls ---- */
/* Remembers call if s is capturing a graph, until that graph is destroyed;
 * nccl: NVSHMEM runs it on NCCL (a collective that moves data). */
void symmem__gpu_graphs_note(nv_stream_t s, const char *call, int nccl);
/* The call just noted on s ran symmem's own kernel, which NCCL never sees. */
void symmem__gpu_graphs_not_nccl(nv_stream_t s);
/* How many such graphs are alive (only those holding collectives, which
 * NVSHMEM runs on NCCL, if only_collectives), and in out which, in words. */
int symmem__gpu_graphs_describe(char *out, size_t size, int only_collectives);
cu_result_t symmem__gpu_launch(void *kernel, size_t blocks, size_t threads, nv_stream_t s,
                               void **params);
int symmem__gpu_device(gpu_t *g);
/* NVRTC's option for this PE's GPU, "-arch=compute_XY", into out. */
void symmem__gpu_arch_option(gpu_t *g, char *out, size_t size);

/* ---- device_state.c: the device state block for kernels ---- */
symmem_status_t symmem__gpu_device_state(gpu_t *g, const symmem_device_state_t *host,
                                         uint64_t *device_addr_p);
/* After the heap's span grew: kernels see the new span. */
symmem_status_t symmem__gpu_device_state_update(gpu_t *g);
/* At finalize: stops the watch thread, frees the peer and team tables. */
void symmem__gpu_device_state_release(gpu_t *g);
/* A team kernels may now use (members: world PEs; this PE among them):
 * its entry in the device team table, and its sync slots zeroed. Every
 * member calls it before the team's first sync on the host, which keeps a
 * kernel from arriving in slots not yet zeroed. */
symmem_status_t symmem__gpu_device_team_set(gpu_t *g, int handle, const int *members, int n);
/* A destroyed team: kernels naming it fail. */
void symmem__gpu_device_team_forget(gpu_t *g, int handle);

/* ---- cuda_module.c: NVSHMEM4Py's module_init and friends ---- */
symmem_status_t symmem__gpu_cuda_module(gpu_t *g, int library, uint64_t handle, int op,
                                        int *links_p);

/* ---- module_consts.c: the device state in attached modules' constant
 * banks ---- */
/* Writes the state (peers: where each PE's heap is mapped here) into every
 * attached module, and into each attached later; at init and each malloc. */
symmem_status_t symmem__gpu_consts_update(gpu_t *g, const uint64_t *peers);
/* At finalize: magic 0 in every attached module (they stay attached). */
void symmem__gpu_consts_invalidate(void);
/* Attaches a loaded module or library (*has_p 0 where it has no constant
 * state: it does not link device.cuh, or LTO dropped what it does not use). */
symmem_status_t symmem__gpu_consts_attach(int library, uint64_t handle, const char *call,
                                          int *has_p);
void symmem__gpu_consts_detach(uint64_t handle);
/* The copy in device memory at at (SYMMEM_DEVICE_CONSTS_COPY_OFFSET after
 * the state block's): kept current like a module's. */
symmem_status_t symmem__gpu_consts_attach_copy(cu_deviceptr_t at);

/* ---- call_check.c: every collective's fingerprint, compared between
 * same-host PEs through the call pages (call_page.h) ---- */
/* init's step: the pages made, mapped by every PE, and unlinked. */
symmem_status_t symmem__gpu_calls_start(gpu_t *g);
void symmem__gpu_calls_stop(gpu_t *g);
/* Before a collective is enqueued: earlier stream calls still unverified
 * are compared, then this one is published into *ref and compared with the
 * peers that published it already. MISMATCH or PEER_DEAD (a peer called
 * finalize() instead) before anything is launched. */
symmem_status_t symmem__gpu_collective_enter(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                             const symmem_team_view_t *team, uint64_t count,
                                             int dtype, int op, int root, int blocking,
                                             gpu_call_ref_t *ref);
/* drain for a blocking collective (compared with every same-host member
 * before it launched): while it runs, earlier stream calls not yet matched
 * are compared as the peers publish them. */
symmem_status_t symmem__gpu_collective_drain(gpu_t *g, const char *call);
/* finalize's rendezvous: marks this PE FINALIZING and waits until every
 * same-host peer is; MISMATCH if a peer is in a collective this PE never
 * entered. */
symmem_status_t symmem__gpu_calls_leave(gpu_t *g);

/* ---- start.c: init and finalize ---- */
symmem_status_t symmem__gpu_init(const symmem_bootstrap_t *boot, symmem_backend_t **backend_p);
symmem_status_t symmem__gpu_prepare_finalize(gpu_t *g);
symmem_status_t symmem__gpu_finalize(gpu_t *g);
symmem_status_t symmem__gpu_unique_id(symmem_unique_id_t *uid_p);
int symmem__gpu_can_run(const symmem_bootstrap_t *boot, char *why, size_t why_size);
void symmem__gpu_library_version(gpu_t *g, char *text, size_t size);

/* ---- exchange.c: one int64 of every PE's on every PE ---- */
/* Every PE's value, so collective arguments can be checked before NVSHMEM
 * sees them; unchecked (memory.c checks malloc's and free's). start
 * enqueues it, finish reads the values once the stream has drained. */
symmem_status_t symmem__gpu_exchange(gpu_t *g, const char *call, int64_t value, int64_t *values);
symmem_status_t symmem__gpu_exchange_start(gpu_t *g, const char *call, int64_t value);
symmem_status_t symmem__gpu_exchange_finish(gpu_t *g, const char *call, int64_t *values);
/* SYMMEM_ERR_MISMATCH naming the first PE whose exchanged value is not size. */
symmem_status_t symmem__gpu_same_size(gpu_t *g, const char *call, const int64_t *values,
                                      size_t size);

/* ---- memory.c: the symmetric heap ---- */
int symmem__gpu_is_device_memory(gpu_t *g, const void *ptr);
/* Whether device memory (is_device_memory says so) is on this PE's GPU,
 * where its kernels can read it. */
int symmem__gpu_is_on_this_gpu(gpu_t *g, const void *device_ptr);
symmem_status_t symmem__gpu_malloc(gpu_t *g, size_t size, size_t alignment, void **ptr_p);
symmem_status_t symmem__gpu_free(gpu_t *g, void *ptr);
void *symmem__gpu_ptr(gpu_t *g, const void *ptr, int pe);
/* own_buffers.c: the engine's allocation (alignment 0: its own) and the
 * heap's span grown to hold it; collective. malloc calls it after its
 * agreement; the backend's own buffers (the exchange's, the device sync
 * area, the staging) with none (init makes them on every PE in the same
 * order). give_back: NULL is nothing. */
symmem_status_t symmem__gpu_heap_take(gpu_t *g, const char *call, size_t size, size_t alignment,
                                      void **ptr_p);
void symmem__gpu_heap_give_back(gpu_t *g, void *ptr);
void symmem__gpu_heap_range(gpu_t *g, uintptr_t *start_p, size_t *size_p);

/* ---- rma.c, signals.c, collectives.c, teams.c, atomics.c, external.c:
 * the slots of the same names in backend.h ---- */
symmem_copy_func_t symmem__gpu_put, symmem__gpu_get, symmem__gpu_put_nbi, symmem__gpu_get_nbi;
symmem_status_t symmem__gpu_quiet(gpu_t *g, symmem_stream_t stream);
symmem_status_t symmem__gpu_fence(gpu_t *g, symmem_stream_t stream);

/* symmem's put_signal kernel (kernels/put_signal.ptx) to peer_dst and
 * peer_sig, as this PE maps them; nbytes 0: signal_op. */
symmem_status_t symmem__gpu_kernel_put_signal(gpu_t *g, const char *call, void *peer_dst,
                                              const void *src, size_t nbytes, uint64_t *peer_sig,
                                              uint64_t value, symmem_signal_op_t op, nv_stream_t s);
symmem_status_t symmem__gpu_put_signal(gpu_t *g, void *dst, const void *src, size_t nbytes,
                                       uint64_t *sig, uint64_t value, symmem_signal_op_t op, int pe,
                                       int nbi, symmem_stream_t stream);
symmem_status_t symmem__gpu_signal_wait_until(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp,
                                              uint64_t value, symmem_stream_t stream,
                                              uint64_t *value_p);
symmem_status_t symmem__gpu_signal_fetch(gpu_t *g, const uint64_t *sig, uint64_t *value_p);
symmem_status_t symmem__gpu_test(gpu_t *g, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                 int64_t value, int *result_p);
symmem_status_t symmem__gpu_wait_until(gpu_t *g, void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                       int64_t value);

symmem_world_sync_func_t symmem__gpu_barrier_all, symmem__gpu_sync_all;
symmem_team_sync_func_t symmem__gpu_barrier, symmem__gpu_sync;
symmem_reduce_func_t symmem__gpu_reduce, symmem__gpu_reducescatter;
symmem_move_func_t symmem__gpu_alltoall, symmem__gpu_fcollect;
symmem_broadcast_func_t symmem__gpu_broadcast;

symmem_team_split_strided_func_t symmem__gpu_team_split_strided;
symmem_team_split_2d_func_t symmem__gpu_team_split_2d;
symmem_team_destroy_func_t symmem__gpu_team_destroy;
symmem_team_init_func_t symmem__gpu_team_init;
symmem_predefined_team_func_t symmem__gpu_predefined_team;
/* Init step: reads the predefined teams from NVSHMEM; _free undoes it. */
symmem_status_t symmem__gpu_predefined_teams_read(gpu_t *g);
void symmem__gpu_predefined_teams_free(gpu_t *g);

symmem_atomic_func_t symmem__gpu_atomic;
/* nvshmem_atomics.c: the kernel named name (a PTX atomic's name) over
 * NVSHMEM's device atomics, for PEs outside the NVLink domain; the module is
 * built at the first call. */
symmem_status_t symmem__gpu_nvshmem_atomic_kernel(gpu_t *g, const char *name, void **kernel_p);
/* At finalize, before NVSHMEM's: nvshmemx_cumodule_finalize and unload. */
void symmem__gpu_nvshmem_atomics_unload(gpu_t *g);
/* own_collectives.c: symmem's own collective kernels. _team_set: what a
 * team (new, or predefined at init) needs of them, once the flag area is
 * made; _takes: whether they serve a collective on team over buffers a and b
 * (either NULL; the same answer on every member); then each collective,
 * enqueued on s (reduce_op: "reduce" or "reducescatter"; move kind:
 * SYMMEM_CALL_ALLTOALL, _FCOLLECT or _BROADCAST). */
void symmem__gpu_own_team_set(gpu_t *g, int handle, const int *members, int n);
int symmem__gpu_own_takes(gpu_t *g, const symmem_team_view_t *team, const void *a, const void *b);
/* The same for reduce and reducescatter (scatter 1; dst holds nelems of
 * dtype). */
int symmem__gpu_own_reduce_takes(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                 const void *dst, const void *src, size_t nelems,
                                 symmem_dtype_t dtype);
symmem_status_t symmem__gpu_own_reduce(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                       void *dst, const void *src, size_t nelems,
                                       symmem_dtype_t dtype, symmem_reduce_op_t op, nv_stream_t s);
/* The same where own_reduce_takes said no but own_takes yes: dst overlaps
 * src without 16-byte packs (through a private buffer). */
symmem_status_t symmem__gpu_own_reduce_staged(gpu_t *g, int scatter, const symmem_team_view_t *team,
                                              void *dst, const void *src, size_t nelems,
                                              symmem_dtype_t dtype, symmem_reduce_op_t op,
                                              nv_stream_t s);
symmem_status_t symmem__gpu_own_move(gpu_t *g, const char *call, symmem_call_kind_t kind,
                                     const symmem_team_view_t *team, void *dst, const void *src,
                                     size_t nbytes, int root, nv_stream_t s);
symmem_status_t symmem__gpu_own_sync(gpu_t *g, const char *call, const symmem_team_view_t *team,
                                     nv_stream_t s);
/* At finalize, before NVSHMEM's: the modules. */
void symmem__gpu_own_unload(gpu_t *g);
/* NVRTC compiles source (for this GPU) and the driver loads it into
 * *module_p, with kernels[i] the kernel names[i]. */
symmem_status_t symmem__gpu_build_module(gpu_t *g, const char *call, const char *source,
                                         void **module_p, const char *const *names, void **kernels,
                                         int count);

#endif

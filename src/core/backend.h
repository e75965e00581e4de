/*
 * The backend ops table: what a backend (cpu: our shared-memory engine; gpu:
 * NVSHMEM) provides to the core. The core checks arguments (PE range, heap
 * membership, sizes) before it calls a slot, so a slot may trust them.
 *
 * Rules:
 *  - version comes first; slots are only ever appended.
 *  - every data-moving slot takes a stream. The cpu backend completes the
 *    operation before returning; the gpu backend enqueues it on the stream,
 *    or completes it before returning when stream is SYMMEM_STREAM_NONE.
 *  - pointers may be host or device memory wherever the backend can reach it.
 *  - a slot a backend lacks points at a function that returns
 *    SYMMEM_ERR_UNSUPPORTED naming the backend (symmem__unsupported_*), never
 *    at NULL: the core refuses a table with an empty slot when it loads it.
 *  - a failing slot writes its message with symmem__error().
 */
#ifndef SYMMEM_CORE_BACKEND_H
#define SYMMEM_CORE_BACKEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "symmem/symmem.h"
#include "calls.h"

#define SYMMEM_BACKEND_OPS_VERSION 8

/* Who we are and how to find the others; filled by bootstrap.c. */
typedef struct {
    int rank;
    int nranks;
    char job[96];          /* rendezvous name, the same on every PE of a job */
    char host[64];         /* this PE's host name */
    int device;            /* gpu: CUDA ordinal or -1 */
    int local_rank;        /* rank among the PEs of this host */
    int local_size;        /* PEs on this host; 0 if the launcher does not say */
    size_t heap_size;      /* bytes of symmetric heap per PE */
    double timeout;        /* seconds, 0 = none */
    double spin_us;        /* spin this long before sleeping */
    double heartbeat;      /* seconds a PE on another host may be silent; 0 = any */
    char status_dir[256];  /* launcher's exit reports, "" if none */
    /* Non-empty when the launcher says its PEs are on more than one host:
     * which variables say so, e.g. "LOCAL_WORLD_SIZE=2 < WORLD_SIZE=4". */
    char spans_hosts[160];
    int have_uid;          /* uid below came from the user (gpu uses it) */
    symmem_unique_id_t uid;
    int have_mpi_comm;     /* init(initializer_method="mpi") on the mpi backend: */
    uint64_t mpi_comm;     /* the MPI_Comm the PEs are, as an integer */
} symmem_bootstrap_t;

/* The predefined teams of PEs that all share one host and no GPU (the cpu
 * backend's): every PE is alone in each team of TEAMS_OF_ONE and in all the
 * others with every PE. A backend says where its PEs are (predefined_team). */
#define SYMMEM_TEAMS_OF_ONE {SYMMEM_TEAM_SAME_MYPE_NODE, SYMMEM_TEAM_SAME_GPU}

/* A team as the backend sees it: world PE numbers of its members. */
typedef struct {
    const int *members; /* members[i]: world PE of team PE i */
    int n;
    int me;             /* our index in members */
    int channel;        /* the backend's synchronisation channel for the team */
} symmem_team_view_t;

/* A backend's private state. */
typedef struct symmem_backend symmem_backend_t;
struct symmem_device_state; /* symmem/device_layout.h */

/* The shapes of slots that backends implement in files of their own: a
 * backend declares those functions with them (symmem_reduce_func_t
 * symmem__cpu_reduce;), so each signature is written once, here. */
typedef symmem_status_t symmem_copy_func_t(symmem_backend_t *be, void *dst, const void *src,
                                           size_t nbytes, int pe, symmem_stream_t stream);
typedef symmem_status_t symmem_world_sync_func_t(symmem_backend_t *be, symmem_stream_t stream);
typedef symmem_status_t symmem_team_split_strided_func_t(symmem_backend_t *be,
                                                         const symmem_team_view_t *parent,
                                                         int start, int stride, int size,
                                                         int in_team, int *handle_p);
typedef symmem_status_t symmem_team_split_2d_func_t(symmem_backend_t *be,
                                                    const symmem_team_view_t *parent,
                                                    int xrange, int *xhandle_p, int *yhandle_p);
typedef symmem_status_t symmem_team_destroy_func_t(symmem_backend_t *be,
                                                   const symmem_team_view_t *team);
typedef symmem_status_t symmem_team_sync_func_t(symmem_backend_t *be,
                                                const symmem_team_view_t *team,
                                                symmem_stream_t stream);
typedef symmem_status_t symmem_reduce_func_t(symmem_backend_t *be, const symmem_team_view_t *team,
                                             void *dst, const void *src, size_t nelems,
                                             symmem_dtype_t dtype, symmem_reduce_op_t op,
                                             symmem_stream_t stream);
typedef symmem_status_t symmem_move_func_t(symmem_backend_t *be, const symmem_team_view_t *team,
                                           void *dst, const void *src, size_t nbytes,
                                           symmem_stream_t stream);
typedef symmem_status_t symmem_broadcast_func_t(symmem_backend_t *be,
                                                const symmem_team_view_t *team, void *dst,
                                                const void *src, size_t nbytes, int root,
                                                symmem_stream_t stream);
typedef symmem_status_t symmem_atomic_func_t(symmem_backend_t *be, symmem_atomic_op_t op,
                                             void *target, symmem_dtype_t dtype, uint64_t value,
                                             uint64_t cond, int pe, uint64_t *fetched_p);
typedef symmem_status_t symmem_team_init_func_t(symmem_backend_t *be, uint64_t key, int npes,
                                                int index, int *members, int *handle_p);
typedef symmem_status_t symmem_predefined_team_func_t(symmem_backend_t *be, symmem_team_t team,
                                                      int *members, int *n_p);

typedef struct symmem_backend_ops {
    uint32_t version; /* SYMMEM_BACKEND_OPS_VERSION */
    const char *name; /* "cpu", "gpu" */

    /* Collective. [in] boot; [out] backend_p: the state every slot gets. */
    symmem_status_t (*init)(const symmem_bootstrap_t *boot,
                            symmem_backend_t **backend_p);
    /* Collective. Releases everything init made; memory handed out stays
     * addressable (reads zeros) so stale views never fault. */
    symmem_status_t (*finalize)(symmem_backend_t *be);

    /* Collective. [in] size > 0 and alignment (0: the backend's own; else a
     * power of two), the same on every PE (checked here: else
     * SYMMEM_ERR_MISMATCH on every PE). [out] ptr_p: local address. */
    symmem_status_t (*malloc)(symmem_backend_t *be, size_t size, size_t alignment,
                              void **ptr_p);
    /* Collective. [in] ptr: the start of a live allocation, the same one on
     * every PE (checked here). */
    symmem_status_t (*free)(symmem_backend_t *be, void *ptr);
    /* [in] ptr: local symmetric address. Returns where this process can
     * load/store PE pe's copy, or NULL. */
    void *(*ptr)(symmem_backend_t *be, const void *ptr, int pe);

    /* [in] dst symmetric, src readable, nbytes > 0, pe valid. */
    symmem_copy_func_t *put;
    /* [in] src symmetric, dst writable. */
    symmem_copy_func_t *get;
    symmem_copy_func_t *put_nbi;
    symmem_copy_func_t *get_nbi;
    symmem_status_t (*quiet)(symmem_backend_t *be, symmem_stream_t stream);
    /* SYMMEM_STREAM_NONE: the puts issued so far; else those queued on it. */
    symmem_status_t (*fence)(symmem_backend_t *be, symmem_stream_t stream);

    /* [in] sig symmetric uint64; nbytes may be 0; nbi: 1 for put_signal_nbi. */
    symmem_status_t (*put_signal)(symmem_backend_t *be, void *dst,
                                  const void *src, size_t nbytes,
                                  uint64_t *sig, uint64_t value,
                                  symmem_signal_op_t op, int pe, int nbi,
                                  symmem_stream_t stream);
    /* [in] sig local symmetric uint64; [out] value_p (may be NULL). */
    symmem_status_t (*signal_wait_until)(symmem_backend_t *be, uint64_t *sig,
                                         symmem_cmp_t cmp, uint64_t value,
                                         symmem_stream_t stream,
                                         uint64_t *value_p);
    /* [in] sig local symmetric uint64; [out] value_p. */
    symmem_status_t (*signal_fetch)(symmem_backend_t *be, const uint64_t *sig,
                                     uint64_t *value_p);
    /* [in] ivar local symmetric element of dtype (an integer type).
     * test: [out] result_p. wait: blocks until the comparison holds. */
    symmem_status_t (*wait_until)(symmem_backend_t *be, void *ivar,
                                  symmem_dtype_t dtype, symmem_cmp_t cmp,
                                  int64_t value);
    symmem_status_t (*test)(symmem_backend_t *be, void *ivar,
                            symmem_dtype_t dtype, symmem_cmp_t cmp,
                            int64_t value, int *result_p);

    /* barrier: quiet, then wait for every PE; sync: wait only. */
    symmem_world_sync_func_t *barrier_all;
    symmem_world_sync_func_t *sync_all;

    /* ---- teams and collectives (appended) ---- */

    /* Collective over parent: the team parent[start + i*stride], i < size
     * (arguments checked by the core; every parent member passes the same).
     * [out] handle_p: the new team's handle (< SYMMEM_TEAM_MAX, the same on
     * every member), or SYMMEM_TEAM_INVALID where in_team is 0. */
    symmem_team_split_strided_func_t *team_split_strided;
    /* Collective over parent: x teams of xrange consecutive members, y teams
     * of the members with the same x index. [out] both handles. */
    symmem_team_split_2d_func_t *team_split_2d;
    /* Collective over the team: releases its channel. */
    symmem_team_destroy_func_t *team_destroy;
    /* barrier: quiet, then wait for every member; sync: wait only. */
    symmem_team_sync_func_t *barrier;
    symmem_team_sync_func_t *sync;
    /* [in] dst, src symmetric; sizes checked by the core. */
    symmem_reduce_func_t *reduce;
    symmem_reduce_func_t *reducescatter;
    symmem_move_func_t *alltoall;
    symmem_move_func_t *fcollect;
    /* [in] root: team-relative. */
    symmem_broadcast_func_t *broadcast;
    /* [in] target symmetric, dtype and op checked; [out] fetched_p may be NULL. */
    symmem_atomic_func_t *atomic;
    /* The CUDA device ordinal the backend's memory lives on; -1 for host. */
    int (*device)(symmem_backend_t *be);
    /* Works before init (be unused): a unique id this backend's init takes. */
    symmem_status_t (*get_unique_id)(symmem_unique_id_t *uid_p);
    /* Whether init could succeed for boot (e.g. a GPU for every PE of the
     * host); 0 with the reason in why if not. Called before init. */
    int (*can_run)(const symmem_bootstrap_t *boot, char *why, size_t why_size);
    /* Collective over the PEs that pass the same key: a team of npes PEs in
     * which the caller is number index. [out] members (npes world PEs, in
     * team order) and handle_p. */
    symmem_team_init_func_t *team_init;
    /* [out] where this PE's own symmetric heap is (0, 0 if unknown), so that
     * private arguments inside it can be checked against live allocations. */
    void (*heap_range)(symmem_backend_t *be, uintptr_t *start_p, size_t *size_p);

    /* ---- external memory (version 2) ---- */

    /* Collective: maps this PE's memory [ptr, ptr + size) (CUDA VMM memory on
     * the gpu) into the symmetric address space; every PE passes the same
     * size. [out] sym_p: the symmetric address that names it from now on. */
    symmem_status_t (*register_external)(symmem_backend_t *be, void *ptr, size_t size,
                                         void **sym_p);
    /* Collective: undoes register_external for the sym it returned. */
    symmem_status_t (*unregister_external)(symmem_backend_t *be, void *sym, size_t size);

    /* ---- version 3 ---- */

    /* [out] text: the version of the library the backend runs on ("3.4.5"
     * for NVSHMEM), or "" where it runs on none. */
    void (*library_version)(symmem_backend_t *be, char *text, size_t size);

    /* ---- version 4 ---- */

    /* Collective, called before finalize: waits, bounded by SYMMEM_TIMEOUT,
     * until this PE can finalize without hanging (on the gpu: work still
     * running on the device, a graph replaying a barrier say, has ended and
     * every PE has arrived). On failure the runtime stays initialised, so
     * the program can finish that work and call finalize again. */
    symmem_status_t (*prepare_finalize)(symmem_backend_t *be);

    /* ---- version 5 ---- */

    /* Collective, at the end of init: publishes the device state block for
     * the backend's own kernels from the host's (core/device_state.h, filled
     * but for its magic). [out] device_addr_p: the copy's device address,
     * fixed for the process, or 0 where the backend has no kernels. */
    symmem_status_t (*device_state)(symmem_backend_t *be, const struct symmem_device_state *host,
                                     uint64_t *device_addr_p);

    /* ---- version 6 ---- */

    /* A CUDA module (library 0) or library (library 1) the program loaded,
     * for NVSHMEM4Py's module_init and friends. [out] *links_p: whether it
     * links NVSHMEM's own device library (holds its device state); if so, op
     * SYMMEM_CUDA_MODULE_INIT / _FINALIZE runs NVSHMEM's init / finalize of
     * it (op _QUERY only looks). Op _ATTACH: where it links symmem's
     * device library (device.cuh's constant state), write that state into
     * it now and whenever it changes, until op _DETACH or finalize; then
     * *links_p says whether it does. */
    symmem_status_t (*cuda_module)(symmem_backend_t *be, int library, uint64_t handle, int op,
                                   int *links_p);

    /* ---- version 7 ---- */

    /* After init: the members of predefined team (below SYMMEM_TEAM_FIRST_USER)
     * where the PEs really are (TEAM_NODE: the PEs of this host). [out]
     * members (room for n_pes world PEs, in team order) and *n_p, 0 where
     * this PE is in no such team. */
    symmem_predefined_team_func_t *predefined_team;

    /* ---- version 8 ---- */

    /* After device code stored into PE pe's heap (njit code on the cpu
     * backend, through core/device_state.h's symmem__device_wake): wake pe
     * where it may sleep in a wait on that memory. [in] pe: checked. A
     * backend whose waits need no waking does nothing (symmem__no_wake). */
    void (*device_wake)(symmem_backend_t *be, int pe);
} symmem_backend_ops_t;

#define SYMMEM_CUDA_MODULE_QUERY 0
#define SYMMEM_CUDA_MODULE_INIT 1
#define SYMMEM_CUDA_MODULE_FINALIZE 2
#define SYMMEM_CUDA_MODULE_ATTACH 3
#define SYMMEM_CUDA_MODULE_DETACH 4

/* unsupported.c: the slots of a backend that lacks an operation. Each
 * returns SYMMEM_ERR_UNSUPPORTED naming the call and the running backend. */
symmem_status_t symmem__unsupported_register_external(symmem_backend_t *be, void *ptr,
                                                      size_t size, void **sym_p);
symmem_status_t symmem__unsupported_unregister_external(symmem_backend_t *be, void *sym,
                                                        size_t size);
void symmem__no_library_version(symmem_backend_t *be, char *text, size_t size);
/* device_state for a backend whose device code is host code (njit). */
symmem_status_t symmem__no_device_state(symmem_backend_t *be,
                                        const struct symmem_device_state *host,
                                        uint64_t *device_addr_p);
/* cuda_module for a backend with no CUDA modules. */
symmem_status_t symmem__unsupported_cuda_module(symmem_backend_t *be, int library,
                                                uint64_t handle, int op, int *links_p);
/* predefined_team for PEs that all share one host and no GPU (TEAMS_OF_ONE). */
symmem_predefined_team_func_t symmem__one_host_predefined_team;
/* device_wake for a backend built into the library whose waits watch the
 * memory itself (a backend of its own shared object defines its own). */
void symmem__no_wake(symmem_backend_t *be, int pe);
/* prepare_finalize for a backend whose finalize cannot be held up. */
symmem_status_t symmem__nothing_to_prepare(symmem_backend_t *be);
/* 1 if every slot of ops is filled; else 0 with the first empty slot in why. */
int symmem__backend_ops_complete(const symmem_backend_ops_t *ops, char *why, size_t why_size);

/* What the core lends a backend built as its own shared object. */
#define SYMMEM_CORE_SERVICES_VERSION 6
typedef struct {
    uint32_t version;
    symmem_status_t (*error)(symmem_status_t status, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    const char *(*last_error)(void);
    /* peer_status.h, so that a backend can tell a dead peer from a slow one */
    uint64_t (*process_start_time)(pid_t pid);
    int (*process_gone)(pid_t pid, uint64_t start_time);
    int (*exit_report)(const char *status_dir, int pe, char *how, size_t how_size,
                       double *when_p);
    /* env.h: a backend reads its variables through the core's one table */
    const char *(*env_string)(const char *name);
    int (*env_is_set)(const char *name);
    size_t (*env_size)(const char *name);
    symmem_status_t (*env_choice)(const char *call, const char *name, int *index_p);
    /* version 4, interrupt.h: SYMMEM_OK, or SYMMEM_ERR_INTERRUPTED (message
     * written) when the program asked the wait to stop (Ctrl-C in Python).
     * Every blocking loop calls it at each poll, beside its dead-peer check. */
    symmem_status_t (*interrupted)(const char *call);
    /* version 5, calls.h: what PEs called, in the cpu engine's words */
    void (*calls_group)(const symmem_call_t *calls, const int *pes, int n, char *out,
                        size_t size);
    void (*call_describe)(symmem_call_t call, char *out, size_t size);
    /* version 6, bootstrap.h: a unique id as the cpu engine makes one (the
     * mpi backend's get_unique_id: its PEs still meet through MPI) */
    symmem_status_t (*unique_id)(symmem_unique_id_t *uid_p);
} symmem_core_services_t;

/* The entry point a gpu backend library exports: fills ops_p if the backend
 * can run here, else returns non-zero with the reason in why. */
typedef int (*symmem_backend_open_func_t)(const symmem_core_services_t *services,
                                          const symmem_backend_ops_t **ops_p, char *why,
                                          size_t why_size);
#define SYMMEM_GPU_BACKEND_ENTRY "symmem_gpu_backend_open"
/* The same entry point of the mpi backend library. */
#define SYMMEM_MPI_BACKEND_ENTRY "symmem_mpi_backend_open"

/* The cpu engine (always built in). */
extern const symmem_backend_ops_t symmem__cpu_backend_ops;

#endif

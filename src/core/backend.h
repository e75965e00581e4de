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

#define SYMMEM_BACKEND_OPS_VERSION 10

/* Who we are and how to find the others; filled by bootstrap.c. */
typedef struct {
    int rank;
    int nranks;
    char job[96];         /* rendezvous name, the same on every PE of a job */
    char host[64];        /* this PE's host name */
    int device;           /* gpu: CUDA ordinal or -1 */
    int local_rank;       /* rank among the PEs of this host */
    int local_size;       /* PEs on this host; 0 if the launcher does not say */
    size_t heap_size;     /* bytes of symmetric heap per PE */
    double timeout;       /* seconds, 0 = none */
    double spin_us;       /* spin this long before sleeping */
    double heartbeat;     /* seconds a PE on another host may be silent; 0 = any */
    char status_dir[256]; /* launcher's exit reports, "" if none */
    /* Non-empty when the launcher says its PEs are on more than one host:
     * which variables say so, e.g. "LOCAL_WORLD_SIZE=2 < WORLD_SIZE=4". */
    char spans_hosts[160];
    int have_uid; /* uid below came from the user (gpu uses it) */
    symmem_unique_id_t uid;
    int have_mpi_comm; /* init(initializer_method="mpi") on the mpi backend: */
    uint64_t mpi_comm; /* the MPI_Comm the PEs are, as an integer */
} symmem_bootstrap_t;

/* The predefined teams of PEs that all share one host and no GPU (the cpu
 * backend's): every PE is alone in each team of TEAMS_OF_ONE and in all the
 * others with every PE. A backend says where its PEs are (predefined_team). */
#define SYMMEM_TEAMS_OF_ONE {SYMMEM_TEAM_SAME_MYPE_NODE, SYMMEM_TEAM_SAME_GPU}

/* A team as the backend sees it: world PE numbers of its members. */
typedef struct {
    const int *members; /* members[i]: world PE of team PE i */
    int n;
    int me;      /* our index in members */
    int channel; /* the backend's synchronisation channel for the team */
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
                                                    const symmem_team_view_t *parent, int xrange,
                                                    int *xhandle_p, int *yhandle_p);
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

typedef symmem_status_t symmem_init_func_t(const symmem_bootstrap_t *boot,
                                           symmem_backend_t **backend_p);
typedef symmem_status_t symmem_finalize_func_t(symmem_backend_t *be);
typedef symmem_status_t symmem_malloc_func_t(symmem_backend_t *be, size_t size, size_t alignment,
                                             void **ptr_p);
typedef symmem_status_t symmem_free_func_t(symmem_backend_t *be, void *ptr);
typedef void *symmem_ptr_func_t(symmem_backend_t *be, const void *ptr, int pe);
typedef symmem_status_t symmem_quiet_func_t(symmem_backend_t *be, symmem_stream_t stream);
typedef symmem_status_t symmem_put_signal_func_t(symmem_backend_t *be, void *dst, const void *src,
                                                 size_t nbytes, uint64_t *sig, uint64_t value,
                                                 symmem_signal_op_t op, int pe, int nbi,
                                                 symmem_stream_t stream);
typedef symmem_status_t symmem_signal_wait_until_func_t(symmem_backend_t *be, uint64_t *sig,
                                                        symmem_cmp_t cmp, uint64_t value,
                                                        symmem_stream_t stream, uint64_t *value_p);
typedef symmem_status_t symmem_signal_fetch_func_t(symmem_backend_t *be, const uint64_t *sig,
                                                   uint64_t *value_p);
typedef symmem_status_t symmem_wait_until_func_t(symmem_backend_t *be, void *ivar,
                                                 symmem_dtype_t dtype, symmem_cmp_t cmp,
                                                 int64_t value);
typedef symmem_status_t symmem_test_func_t(symmem_backend_t *be, void *ivar, symmem_dtype_t dtype,
                                           symmem_cmp_t cmp, int64_t value, int *result_p);
typedef int symmem_device_func_t(symmem_backend_t *be);
typedef symmem_status_t symmem_get_unique_id_func_t(symmem_unique_id_t *uid_p);
typedef int symmem_can_run_func_t(const symmem_bootstrap_t *boot, char *why, size_t why_size);
typedef void symmem_heap_range_func_t(symmem_backend_t *be, uintptr_t *start_p, size_t *size_p);
typedef symmem_status_t symmem_register_external_func_t(symmem_backend_t *be, void *ptr,
                                                        size_t size, void **sym_p);
typedef symmem_status_t symmem_unregister_external_func_t(symmem_backend_t *be, void *sym,
                                                          size_t size);
typedef void symmem_library_version_func_t(symmem_backend_t *be, char *text, size_t size);
typedef symmem_status_t symmem_device_state_func_t(symmem_backend_t *be,
                                                   const struct symmem_device_state *host,
                                                   uint64_t *device_addr_p);
typedef symmem_status_t symmem_cuda_module_func_t(symmem_backend_t *be, int library,
                                                  uint64_t handle, int op, int *links_p);
typedef void symmem_device_wake_func_t(symmem_backend_t *be, int pe);
typedef void symmem_engine_func_t(symmem_backend_t *be, const symmem_bootstrap_t *boot, char *name,
                                  size_t name_size, char *why, size_t why_size);

/* The table: its slots, in order, with what each does, are listed once, in
 * backend_slots.def (SYMMEM_BACKEND_SLOT(name, type) a row), which makes
 * this struct and the load-time check that none is empty (unsupported.c). */
typedef struct symmem_backend_ops {
    uint32_t version; /* SYMMEM_BACKEND_OPS_VERSION */
    const char *name; /* "cpu", "gpu": for messages, never to decide behaviour */
#define SYMMEM_BACKEND_SLOT(name, type) type *name;
#include "backend_slots.def"
#undef SYMMEM_BACKEND_SLOT
    /* ---- version 9 ---- */
    /* What the backend can do: symmem_capability_t bits (vocabulary.h), the
     * same for every PE and run; the core, the extension and the package
     * decide by these, never by the name. */
    uint32_t capabilities;
} symmem_backend_ops_t;

#define SYMMEM_CUDA_MODULE_QUERY 0
#define SYMMEM_CUDA_MODULE_INIT 1
#define SYMMEM_CUDA_MODULE_FINALIZE 2
#define SYMMEM_CUDA_MODULE_ATTACH 3
#define SYMMEM_CUDA_MODULE_DETACH 4

/* unsupported.c: the slots of a backend that lacks an operation. Each
 * returns SYMMEM_ERR_UNSUPPORTED naming the call and the running backend. */
symmem_status_t symmem__unsupported_register_external(symmem_backend_t *be, void *ptr, size_t size,
                                                      void **sym_p);
symmem_status_t symmem__unsupported_unregister_external(symmem_backend_t *be, void *sym,
                                                        size_t size);
void symmem__no_library_version(symmem_backend_t *be, char *text, size_t size);
/* device_state for a backend whose device code is host code (njit). */
symmem_status_t symmem__no_device_state(symmem_backend_t *be,
                                        const struct symmem_device_state *host,
                                        uint64_t *device_addr_p);
/* cuda_module for a backend with no CUDA modules. */
symmem_status_t symmem__unsupported_cuda_module(symmem_backend_t *be, int library, uint64_t handle,
                                                int op, int *links_p);
/* predefined_team for PEs that all share one host and no GPU (TEAMS_OF_ONE). */
symmem_predefined_team_func_t symmem__one_host_predefined_team;
/* device_wake for a backend built into the library whose waits watch the
 * memory itself (a backend of its own shared object defines its own). */
void symmem__no_wake(symmem_backend_t *be, int pe);
/* The engine slot of a backend with one engine: "" for name and why. */
symmem_engine_func_t symmem__one_engine;
/* prepare_finalize for a backend whose finalize cannot be held up. */
symmem_status_t symmem__nothing_to_prepare(symmem_backend_t *be);
/* 1 if every slot of ops is filled; else 0 with the first empty slot in why. */
int symmem__backend_ops_complete(const symmem_backend_ops_t *ops, char *why, size_t why_size);

/* What the core lends a backend built as its own shared object. */
#define SYMMEM_CORE_SERVICES_VERSION 7
typedef struct {
    uint32_t version;
    symmem_status_t (*error)(symmem_status_t status, const char *fmt, ...)
        __attribute__((format(printf, 2, 3)));
    const char *(*last_error)(void);
    /* peer_status.h, so that a backend can tell a dead peer from a slow one */
    uint64_t (*process_start_time)(pid_t pid);
    int (*process_gone)(pid_t pid, uint64_t start_time);
    int (*exit_report)(const char *status_dir, int pe, char *how, size_t how_size, double *when_p);
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
    void (*calls_group)(const symmem_call_t *calls, const int *pes, int n, char *out, size_t size);
    void (*call_describe)(symmem_call_t call, char *out, size_t size);
    /* version 6, bootstrap.h: a unique id as the cpu engine makes one (the
     * mpi backend's get_unique_id: its PEs still meet through MPI) */
    symmem_status_t (*unique_id)(symmem_unique_id_t *uid_p);
    /* version 7, env.h: a FLAG variable (env_size reads only sizes and numbers) */
    int (*env_flag)(const char *name);
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

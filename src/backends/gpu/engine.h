/* The gpu backend's engines: who starts the job and maps the symmetric
 * heap, and the few calls that differ with it. Everything else in this
 * folder (symmem's kernels, the call pages, the device state, graphs, the
 * peer watch) serves both.
 *
 *  - nvshmem (nvshmem_*.c): NVIDIA's NVSHMEM host library, loaded at run
 *    time: its start-up, heap and peer mappings, RMA, teams, and its
 *    collectives where symmem's kernels do not serve a call. One GPU a PE;
 *    PEs on several hosts.
 *  - symmem (symmem_*.c, vmm_heap.c, host_mesh.c): the PEs of one host,
 *    which may share GPUs. The heap is CUDA VMM memory that every PE maps
 *    into every other's address space at the same offsets (file
 *    descriptors handed over Unix sockets); copies are the copy engine's;
 *    waits, barriers and collectives are symmem's kernels.
 *
 * engine_choice.c picks one for a job (SYMMEM_GPU_ENGINE). */
#ifndef SYMMEM_GPU_ENGINE_H
#define SYMMEM_GPU_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "../../core/backend.h"
#include "nvshmem_abi.h"

typedef struct symmem_backend gpu_t;

/* A copy on a stream; dst (put) or src (get) is symmetric on PE pe. Returns
 * a CUDA status (0: enqueued). */
typedef int gpu_copy_func_t(gpu_t *g, void *dst, const void *src, size_t n, int pe, nv_stream_t s);

typedef struct {
    const char *name; /* "nvshmem" or "symmem": SYMMEM_GPU_ENGINE's words */
    /* NVSHMEM runs, so modules that link its device library can get its
     * state (cuda_module.c) */
    int nvshmem_device_state;

    /* ---- start and end ---- */
    /* init's step after the CUDA context: the job starts (every PE). */
    symmem_status_t (*start)(gpu_t *g);
    /* Undoes start, the last step of finalize (finished: every PE came
     * through prepare_finalize) or of a failed init; may fail, leaving the
     * context held. */
    symmem_status_t (*stop)(gpu_t *g, int finished);
    /* prepare_finalize's last step: every PE of the job has come this far. */
    symmem_status_t (*final_barrier)(gpu_t *g);
    void (*version)(gpu_t *g, char *text, size_t size);

    /* ---- the symmetric heap ---- */
    /* Collective: size bytes (alignment 0: the engine's own) at the same
     * offset on every PE; the agreement on the arguments is made already. */
    symmem_status_t (*alloc)(gpu_t *g, const char *call, size_t size, size_t alignment,
                             void **ptr_p);
    /* Collective. */
    symmem_status_t (*release)(gpu_t *g, const char *call, void *ptr);
    /* Where this process maps PE pe's copy of the symmetric address ptr,
     * or NULL where it does not. */
    void *(*ptr)(gpu_t *g, const void *ptr, int pe);
    /* One int64 of every PE on every PE (exchange.c): start gives this PE's,
     * finish reads them all once the backend's stream has drained. */
    symmem_status_t (*exchange_start)(gpu_t *g, const char *call, int64_t value);
    symmem_status_t (*exchange_finish)(gpu_t *g, const char *call, int64_t *values);

    /* ---- one-sided calls ---- */
    gpu_copy_func_t *put, *get, *put_nbi, *get_nbi;
    /* Every copy enqueued on s so far is done and visible once s gets
     * past this point. */
    void (*quiet)(gpu_t *g, nv_stream_t s);
    /* The host's fence: puts issued so far are ordered before later ones. */
    void (*fence)(gpu_t *g);
    /* put_signal or (nbytes 0) signal_op where symmem's one kernel cannot
     * take it (a peer not mapped here, src on another GPU). */
    symmem_status_t (*put_signal)(gpu_t *g, const char *call, void *dst, const void *src,
                                  size_t nbytes, uint64_t *sig, uint64_t value,
                                  symmem_signal_op_t op, int pe, int nbi, nv_stream_t s);
    symmem_status_t (*signal_wait)(gpu_t *g, uint64_t *sig, symmem_cmp_t cmp, uint64_t value,
                                   nv_stream_t s);
    symmem_status_t (*signal_fetch)(gpu_t *g, const uint64_t *sig, uint64_t *value_p);

    /* ---- collectives symmem's kernels do not take (the caller has
     * published the call on the call page; kind as collectives.c's) ---- */
    symmem_status_t (*sync)(gpu_t *g, const char *call, symmem_call_kind_t kind,
                            const symmem_team_view_t *team, nv_stream_t s);
    symmem_status_t (*reduce)(gpu_t *g, int scatter, const symmem_team_view_t *team, void *dst,
                              const void *src, size_t nelems, symmem_dtype_t dtype,
                              symmem_reduce_op_t op, nv_stream_t s);
    symmem_status_t (*move)(gpu_t *g, const char *call, symmem_call_kind_t kind,
                            const symmem_team_view_t *team, void *dst, const void *src,
                            size_t nbytes, int root, nv_stream_t s);

    /* ---- teams: the backend's slots of the same names, but for the
     * bookkeeping teams.c does for both (call pages, device team table) ---- */
    /* init's step: fills g->predefined. */
    symmem_status_t (*predefined_teams)(gpu_t *g);
    symmem_status_t (*split_strided)(gpu_t *g, const symmem_team_view_t *parent, int start,
                                     int stride, int size, int in_team, int *handle_p);
    symmem_status_t (*split_2d)(gpu_t *g, const symmem_team_view_t *parent, int xrange,
                                int *xhandle_p, int *yhandle_p);
    /* members: room for npes; filled in index order. */
    symmem_status_t (*team_init)(gpu_t *g, uint64_t key, int npes, int index, int *members,
                                 int *handle_p);
    void (*team_destroy)(gpu_t *g, int handle);
    /* A new team's members meet once its flags are zeroed on every one. */
    symmem_status_t (*team_meet)(gpu_t *g, const char *call, int handle, const int *members, int n);

    /* ---- external memory ---- */
    symmem_status_t (*register_external)(gpu_t *g, void *ptr, size_t size, void **sym_p);
    symmem_status_t (*unregister_external)(gpu_t *g, void *sym, size_t size);
} gpu_engine_t;

extern const gpu_engine_t symmem__gpu_nvshmem_engine; /* nvshmem_engine.c */
extern const gpu_engine_t symmem__gpu_symmem_engine;  /* symmem_engine.c */

/* engine_choice.c: the engine SYMMEM_GPU_ENGINE and the job ask for (why
 * it, in why), or NULL (why not, in why). */
const gpu_engine_t *symmem__gpu_engine_choose(const symmem_bootstrap_t *boot, char *why,
                                              size_t why_size);
/* The backend's engine slot (backend_slots.def). */
symmem_engine_func_t symmem__gpu_engine_slot;

#endif

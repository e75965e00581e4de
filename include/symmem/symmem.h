/*
 * symmem: symmetric memory for processes on CPUs and GPUs.
 *
 * The one header a C program includes. Every PE (processing element, one
 * process) owns a slice of a symmetric heap; any PE can read, write and
 * signal into any other PE's slice with one-sided calls.
 *
 * Every call returns a symmem_status_t (0 = SYMMEM_OK). On failure,
 * symmem_last_error() gives a message that names the call, the argument,
 * the value and the PE, e.g.
 *   "[pe 1] put: dst [0x7f12..+4096) is not on the symmetric heap"
 *
 * A stream argument is a CUDA stream (cudaStream_t) on the gpu backend and is
 * ignored by the cpu backend, which completes every call before returning.
 * SYMMEM_STREAM_NONE asks for a blocking call on both.
 */
#ifndef SYMMEM_SYMMEM_H
#define SYMMEM_SYMMEM_H

#include <stddef.h>
#include <stdint.h>

#include "vocabulary.h" /* dtypes, ops, comparisons, capabilities: the enums */

#ifdef __cplusplus
extern "C" {
#endif

/* The one place the version is written: setup.py reads it from here. */
#define SYMMEM_VERSION_MAJOR 0
#define SYMMEM_VERSION_MINOR 1
#define SYMMEM_VERSION_PATCH 0
#define SYMMEM_VERSION_STRING                                                                      \
    SYMMEM__STR(SYMMEM_VERSION_MAJOR)                                                              \
    "." SYMMEM__STR(SYMMEM_VERSION_MINOR) "." SYMMEM__STR(SYMMEM_VERSION_PATCH)
#define SYMMEM__STR(x) SYMMEM__STR2(x)
#define SYMMEM__STR2(x) #x

/* What the library exports: the functions of this header, nothing else
 * (it is built with hidden visibility). Compiled into another shared object
 * (the Python extension, with SYMMEM_EMBEDDED defined) it exports nothing. */
#ifdef SYMMEM_EMBEDDED
#define SYMMEM_API
#else
#define SYMMEM_API __attribute__((visibility("default")))
#endif
/* The OpenSHMEM specification the API follows. */
#define SYMMEM_OPENSHMEM_SPEC_VERSION "1.5"

typedef enum {
    SYMMEM_OK = 0,
    SYMMEM_ERR_INVALID = 1,         /* misuse: bad argument, PE, dtype, op */
    SYMMEM_ERR_NOT_INITIALIZED = 2, /* called before init or after finalize */
    SYMMEM_ERR_NOT_SYMMETRIC = 3,   /* memory is not on the symmetric heap */
    SYMMEM_ERR_MISMATCH = 4,        /* PEs disagree on a collective's arguments */
    SYMMEM_ERR_NO_MEMORY = 5,       /* the symmetric heap or the system is full */
    SYMMEM_ERR_SYSTEM = 6,          /* a system call failed */
    SYMMEM_ERR_BOOTSTRAP = 7,       /* the PEs could not find each other */
    SYMMEM_ERR_PEER_DEAD = 8,       /* a peer PE exited while we waited for it */
    SYMMEM_ERR_TIMEOUT = 9,         /* SYMMEM_TIMEOUT expired */
    SYMMEM_ERR_UNSUPPORTED = 10,    /* the running backend lacks this feature */
    SYMMEM_ERR_BACKEND = 11,        /* the backend library reported a failure */
    SYMMEM_ERR_INTERRUPTED = 12,    /* a wait was interrupted: the program's signal handler asked
                                       (Python: KeyboardInterrupt on Ctrl-C) */
    SYMMEM_ERR_FORKED = 13,         /* called in a process forked after init(): no PE */
    SYMMEM_STATUS_COUNT
} symmem_status_t;

/* A short, fixed description of a status ("invalid argument"). */
SYMMEM_API const char *symmem_status_string(symmem_status_t status);
/* The message of the last failed call on this thread ("" if none). */
SYMMEM_API const char *symmem_last_error(void);

/* CUDA stream handle (cudaStream_t); SYMMEM_STREAM_NONE means "blocking". */
typedef void *symmem_stream_t;
#define SYMMEM_STREAM_NONE ((symmem_stream_t)0)

/* ---- initialisation ------------------------------------------------------ */

#define SYMMEM_UNIQUE_ID_SIZE 128

/* Opaque bytes that let PEs of one job find each other. Made by one PE with
 * symmem_get_unique_id() and handed to the others by any means. */
typedef struct {
    uint8_t bytes[SYMMEM_UNIQUE_ID_SIZE];
} symmem_unique_id_t;

typedef enum {
    SYMMEM_INIT_FROM_ENV = 0,     /* launcher, torchrun, mpirun/srun, or one PE */
    SYMMEM_INIT_WITH_UID = 1,     /* attr.uid, attr.rank, attr.nranks */
    SYMMEM_INIT_WITH_MPI_COMM = 2 /* mpi backend: attr.mpi_comm, attr.rank, attr.nranks */
} symmem_init_method_t;

/* Version 2 appends mpi_comm; a version 1 attr (without it) is still taken. */
#define SYMMEM_INIT_ATTR_VERSION 2

typedef struct {
    uint32_t version; /* SYMMEM_INIT_ATTR_VERSION */
    symmem_init_method_t method;
    symmem_unique_id_t uid; /* SYMMEM_INIT_WITH_UID only */
    int rank;               /* SYMMEM_INIT_WITH_UID only */
    int nranks;             /* SYMMEM_INIT_WITH_UID only */
    const char *backend;    /* "cpu", "gpu", "mpi", "auto" or NULL (SYMMEM_BACKEND) */
    int device;             /* gpu: CUDA ordinal, -1 = LOCAL_RANK % devices */
    /* SYMMEM_INIT_WITH_MPI_COMM: the MPI_Comm whose processes become the PEs,
     * as an integer (mpi4py's comm.handle), in the MPI the mpi backend was
     * built with; rank and nranks: this process's number in it and its size. */
    uint64_t mpi_comm;
} symmem_init_attr_t;

/* Fills attr with defaults: method FROM_ENV, backend NULL, device -1. */
SYMMEM_API void symmem_init_attr_default(symmem_init_attr_t *attr);
/* Makes a fresh unique id (collective-free; call it on one PE) in the format
 * of the backend SYMMEM_BACKEND selects. */
SYMMEM_API symmem_status_t symmem_get_unique_id(symmem_unique_id_t *uid_p);

/* Collective over all PEs. A second call while initialised does nothing. */
SYMMEM_API symmem_status_t symmem_init(void);
SYMMEM_API symmem_status_t symmem_init_attr(const symmem_init_attr_t *attr);
/* Collective. Frees what the program forgot. A second call does nothing. */
SYMMEM_API symmem_status_t symmem_finalize(void);
SYMMEM_API int symmem_initialized(void);

SYMMEM_API int symmem_my_pe(void); /* -1 before init */
SYMMEM_API int symmem_n_pes(void); /* -1 before init */
/* The running backend's name ("cpu", "gpu" or "mpi"), NULL before init. */
SYMMEM_API const char *symmem_backend_name(void);
/* The engine under the running backend, where it has two (the gpu
 * backend's "nvshmem" or "symmem"); "" for the others and before init. */
SYMMEM_API const char *symmem_engine_name(void);
/* What the running backend can do: symmem_capability_t bits
 * (SYMMEM_CAP_DEVICE_MEMORY, ...; vocabulary.h), 0 before init. */
SYMMEM_API uint32_t symmem_capabilities(void);
/* The CUDA device ordinal of the symmetric heap; -1 for host memory. */
SYMMEM_API int symmem_device(void);
/* The version of the library the backend runs on ("3.4.5" for NVSHMEM);
 * "" on the cpu backend and before init. */
SYMMEM_API const char *symmem_library_version(void);

/* ---- symmetric memory ---------------------------------------------------- */

/* Collective: every PE must ask for the same size, or every PE gets
 * SYMMEM_ERR_MISMATCH and the heap is left as it was. size 0 gives NULL. */
SYMMEM_API symmem_status_t symmem_malloc(size_t size, void **ptr_p);
/* Collective: symmem_malloc at an address that is a multiple of alignment, a
 * power of two, the same on every PE (on the cpu backend at most
 * SYMMEM_CPU_ALIGN_MAX). */
SYMMEM_API symmem_status_t symmem_align(size_t alignment, size_t size, void **ptr_p);
#define SYMMEM_CPU_ALIGN_MAX ((size_t)2 << 20)
/* Collective: every PE frees the same allocation. */
SYMMEM_API symmem_status_t symmem_free(void *ptr);
/* The address through which this PE can load/store PE pe's copy of ptr,
 * or NULL where no such mapping exists (never on the cpu backend). */
SYMMEM_API void *symmem_ptr(const void *ptr, int pe);
/* Collective: makes this PE's memory [ptr, ptr+size) symmetric (on the gpu
 * backend: CUDA VMM memory, cuMemCreate/cuMemMap); every PE passes the same
 * size. *sym_p is the address to use in symmem calls from now on. The cpu
 * backend returns SYMMEM_ERR_UNSUPPORTED. */
SYMMEM_API symmem_status_t symmem_register_external(void *ptr, size_t size, void **sym_p);
/* Collective: undoes symmem_register_external for the sym it returned. */
SYMMEM_API symmem_status_t symmem_unregister_external(void *sym);
/* Finds the live allocation holding [ptr, ptr+nbytes): its start and size. */
SYMMEM_API symmem_status_t symmem_find_allocation(const void *ptr, size_t nbytes, void **start_p,
                                                  size_t *size_p);

/* ---- one-sided data movement --------------------------------------------- */

/* dst is symmetric; src may be any memory the backend can read. */
SYMMEM_API symmem_status_t symmem_put(void *dst, const void *src, size_t nbytes, int pe,
                                      symmem_stream_t stream);
SYMMEM_API symmem_status_t symmem_get(void *dst, const void *src, size_t nbytes, int pe,
                                      symmem_stream_t stream);
/* Non-blocking forms: complete at the next symmem_quiet on the stream. */
SYMMEM_API symmem_status_t symmem_put_nbi(void *dst, const void *src, size_t nbytes, int pe,
                                          symmem_stream_t stream);
SYMMEM_API symmem_status_t symmem_get_nbi(void *dst, const void *src, size_t nbytes, int pe,
                                          symmem_stream_t stream);
/* Completes every put/get issued by this PE (on the stream). */
SYMMEM_API symmem_status_t symmem_quiet(symmem_stream_t stream);
/* Orders puts to each PE: those before it land before those after it. */
SYMMEM_API symmem_status_t symmem_fence(void);
/* The same for the puts queued on the stream, where the stream reaches it:
 * there it completes them, as symmem_quiet(stream) does (no library has a
 * fence on a stream). SYMMEM_STREAM_NONE: symmem_fence(). */
SYMMEM_API symmem_status_t symmem_fence_on_stream(symmem_stream_t stream);

/* ---- signals --------------------------------------------------------------*/

/* symmem_signal_op_t (SYMMEM_SIGNAL_SET, _ADD) and symmem_cmp_t
 * (SYMMEM_CMP_EQ ... _GE): vocabulary.h. */

/* put, then update sig on pe; a PE that sees the signal sees the data. */
SYMMEM_API symmem_status_t symmem_put_signal(void *dst, const void *src, size_t nbytes,
                                             uint64_t *sig, uint64_t value, symmem_signal_op_t op,
                                             int pe, symmem_stream_t stream);
SYMMEM_API symmem_status_t symmem_put_signal_nbi(void *dst, const void *src, size_t nbytes,
                                                 uint64_t *sig, uint64_t value,
                                                 symmem_signal_op_t op, int pe,
                                                 symmem_stream_t stream);
SYMMEM_API symmem_status_t symmem_signal_op(uint64_t *sig, uint64_t value, symmem_signal_op_t op,
                                            int pe, symmem_stream_t stream);
/* Waits until (*sig cmp value) holds on this PE; its value goes to value_p
 * (may be NULL; not filled for a stream-ordered wait on the gpu backend). */
SYMMEM_API symmem_status_t symmem_signal_wait_until(uint64_t *sig, symmem_cmp_t cmp, uint64_t value,
                                                    symmem_stream_t stream, uint64_t *value_p);
SYMMEM_API symmem_status_t symmem_signal_fetch(const uint64_t *sig, uint64_t *value_p);

/* ---- point synchronisation on any integer element ------------------------ */

/* symmem_dtype_t (SYMMEM_DTYPE_BOOL ... _FLOAT64): vocabulary.h. */

SYMMEM_API size_t symmem_dtype_size(symmem_dtype_t dtype);
SYMMEM_API const char *symmem_dtype_name(symmem_dtype_t dtype);

/* Waits until (*ivar cmp value) holds; ivar is local symmetric memory. */
SYMMEM_API symmem_status_t symmem_wait_until(void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                             int64_t value);
/* Returns 1 in *result_p if (*ivar cmp value) holds now, else 0. */
SYMMEM_API symmem_status_t symmem_test(void *ivar, symmem_dtype_t dtype, symmem_cmp_t cmp,
                                       int64_t value, int *result_p);

/* ---- synchronisation ----------------------------------------------------- */

/* Completes this PE's puts, then waits for every PE to arrive. */
SYMMEM_API symmem_status_t symmem_barrier_all(symmem_stream_t stream);
/* Waits for every PE to arrive (no completion of puts implied). */
SYMMEM_API symmem_status_t symmem_sync_all(symmem_stream_t stream);

/* ---- teams ----------------------------------------------------------------*/

/* A team handle. User teams get handles >= SYMMEM_TEAM_FIRST_USER that are
 * the same on every member. The predefined teams hold the PEs as the backend
 * places them: on the cpu backend (one host) as noted below; on the gpu
 * backend as NVSHMEM does (TEAM_NODE: the PEs of this host; TEAM_SHARED:
 * those whose memory this GPU maps; TEAM_SAME_MYPE_NODE: the PEs with this
 * PE's local number on every host). */
typedef int32_t symmem_team_t;
#define SYMMEM_TEAM_INVALID (-1)
#define SYMMEM_TEAM_WORLD 0
#define SYMMEM_TEAM_SHARED 1         /* cpu: every PE of the host */
#define SYMMEM_TEAM_NODE 2           /* cpu: every PE of the host */
#define SYMMEM_TEAM_SAME_MYPE_NODE 3 /* cpu: just this PE */
#define SYMMEM_TEAM_SAME_GPU 4       /* cpu: just this PE */
#define SYMMEM_TEAM_GPU_LEADERS 5    /* cpu: every PE */
#define SYMMEM_TEAM_FIRST_USER 6
#define SYMMEM_TEAM_MAX 64

/* -1 if the calling PE is not a member (or the team is invalid). */
SYMMEM_API int symmem_team_my_pe(symmem_team_t team);
SYMMEM_API int symmem_team_n_pes(symmem_team_t team);
/* src_pe of src_team as numbered in dest_team; -1 where not a member. */
SYMMEM_API int symmem_team_translate_pe(symmem_team_t src_team, int src_pe,
                                        symmem_team_t dest_team);
/* The world PE number of a team's member (-1 if out of range). */
SYMMEM_API int symmem_team_world_pe(symmem_team_t team, int team_pe);

/* Collective over parent: members parent[start + i*stride], i < size.
 * PEs outside the new team get SYMMEM_TEAM_INVALID. */
SYMMEM_API symmem_status_t symmem_team_split_strided(symmem_team_t parent, int start, int stride,
                                                     int size, symmem_team_t *new_team_p);
/* Collective over parent: x teams of xrange consecutive PEs, y teams of
 * the PEs with the same x index. */
SYMMEM_API symmem_status_t symmem_team_split_2d(symmem_team_t parent, int xrange,
                                                symmem_team_t *xteam_p, symmem_team_t *yteam_p);
/* Collective over the PEs that pass the same key (any non-zero number they
 * agreed on, e.g. a team unique id's hash): a team of npes PEs in which the
 * caller is number index (0 <= index < npes, each index taken once). */
SYMMEM_API symmem_status_t symmem_team_init(uint64_t key, int npes, int index,
                                            symmem_team_t *new_team_p);
/* Collective over the team. */
SYMMEM_API symmem_status_t symmem_team_destroy(symmem_team_t team);

/* ---- collectives (every member calls them in the same order) ------------ */

/* symmem_reduce_op_t (SYMMEM_OP_SUM ... _XOR; AND, OR and XOR are bitwise:
 * integer and bool only): vocabulary.h. */

SYMMEM_API const char *symmem_reduce_op_name(symmem_reduce_op_t op);

SYMMEM_API symmem_status_t symmem_team_barrier(symmem_team_t team, symmem_stream_t stream);
SYMMEM_API symmem_status_t symmem_team_sync(symmem_team_t team, symmem_stream_t stream);
/* All-reduce of nelems elements: dst[i] = op over members of src[i]. */
SYMMEM_API symmem_status_t symmem_reduce(symmem_team_t team, void *dst, const void *src,
                                         size_t nelems, symmem_dtype_t dtype, symmem_reduce_op_t op,
                                         symmem_stream_t stream);
/* Member k gets block k (nelems elements) of the reduction of src
 * (team_n_pes * nelems elements). */
SYMMEM_API symmem_status_t symmem_reducescatter(symmem_team_t team, void *dst, const void *src,
                                                size_t nelems, symmem_dtype_t dtype,
                                                symmem_reduce_op_t op, symmem_stream_t stream);
/* Block j (nbytes) of member k's src lands in block k of member j's dst. */
SYMMEM_API symmem_status_t symmem_alltoall(symmem_team_t team, void *dst, const void *src,
                                           size_t nbytes, symmem_stream_t stream);
/* All-gather: member k's src (nbytes) lands in block k of every dst. */
SYMMEM_API symmem_status_t symmem_fcollect(symmem_team_t team, void *dst, const void *src,
                                           size_t nbytes, symmem_stream_t stream);
/* root (team-relative) src's nbytes land in every member's dst. */
SYMMEM_API symmem_status_t symmem_broadcast(symmem_team_t team, void *dst, const void *src,
                                            size_t nbytes, int root, symmem_stream_t stream);

/* ---- atomics --------------------------------------------------------------*/

/* symmem_atomic_op_t (SYMMEM_ATOMIC_FETCH ... _COMPARE_SWAP): vocabulary.h. */

/* One atomic on PE pe's copy of target (an int32, int64, uint32 or uint64;
 * float32/float64 for FETCH, SET, SWAP, ADD, FETCH_ADD). value and cond hold
 * the element's bits in their low bytes; fetched_p (may be NULL) gets the
 * old value's bits. Atomic against every other symmem atomic from any PE. */
SYMMEM_API symmem_status_t symmem_atomic(symmem_atomic_op_t op, void *target, symmem_dtype_t dtype,
                                         uint64_t value, uint64_t cond, int pe,
                                         uint64_t *fetched_p);
SYMMEM_API const char *symmem_atomic_op_name(symmem_atomic_op_t op);

#ifdef __cplusplus
}
#endif
#endif /* SYMMEM_SYMMEM_H */

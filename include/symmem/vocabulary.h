/*
 * symmem's vocabulary, each word written once: element types, reduce ops,
 * atomic ops (and the device library's atomic instructions they run as),
 * signal ops, comparisons, the collectives a fingerprint names, and what a
 * backend can do. Each is an X-macro list; every layer makes its
 * tables from it (the C enums below, the core's names and sizes, the
 * extension's _symmem.DTYPES, REDUCE_OPS, ... tables, the backends' and the
 * kernels' variants), so adding a dtype or an op is one line here.
 *
 * A list calls X once a row; the codes are ABI (the library's, device
 * code's and Python's numbers) and never change. C, C++ and CUDA C (NVRTC
 * too, through tools/embed.py) include it: no system header.
 */
#ifndef SYMMEM_VOCABULARY_H
#define SYMMEM_VOCABULARY_H

/* Element types: X(NAME, "name", code, bytes, c_type, "nvshmem", KIND).
 * c_type holds the element (the 16-bit floats as their bits); "nvshmem" is
 * the type NVSHMEM's collectives name it by (bool goes as uint8); KIND is
 * BOOL, INT (signed), UINT, FLOAT, or HALF (a 16-bit float, combined in
 * float). */
#define SYMMEM_DTYPES(X)                                                                           \
    X(BOOL, "bool", 0, 1, unsigned char, "uint8", BOOL)                                            \
    X(INT8, "int8", 1, 1, signed char, "int8", INT)                                                \
    X(INT16, "int16", 2, 2, short, "int16", INT)                                                   \
    X(INT32, "int32", 3, 4, int, "int32", INT)                                                     \
    X(INT64, "int64", 4, 8, long long, "int64", INT)                                               \
    X(UINT8, "uint8", 5, 1, unsigned char, "uint8", UINT)                                          \
    X(UINT16, "uint16", 6, 2, unsigned short, "uint16", UINT)                                      \
    X(UINT32, "uint32", 7, 4, unsigned int, "uint32", UINT)                                        \
    X(UINT64, "uint64", 8, 8, unsigned long long, "uint64", UINT)                                  \
    X(FLOAT16, "float16", 9, 2, unsigned short, "half", HALF)                                      \
    X(BFLOAT16, "bfloat16", 10, 2, unsigned short, "bfloat16", HALF)                               \
    X(FLOAT32, "float32", 11, 4, float, "float", FLOAT)                                            \
    X(FLOAT64, "float64", 12, 8, double, "double", FLOAT)

/* Reduce ops: X(NAME, "name", code, bitwise, combine) where combine is the
 * op on two values: a, what members 0 .. j - 1 combined to, and b, member
 * j's value (the one order: docs/reproducibility.md); bitwise ops take
 * integers and bool only. min and max: a NaN b wins ((b) != (b)), a NaN a
 * stays, and of equal values (+0 and -0) a stays. */
#define SYMMEM_REDUCE_OPS(X)                                                                       \
    X(SUM, "sum", 0, 0, (a) + (b))                                                                 \
    X(MIN, "min", 1, 0, (b) < (a) || (b) != (b) ? (b) : (a))                                       \
    X(MAX, "max", 2, 0, (b) > (a) || (b) != (b) ? (b) : (a))                                       \
    X(PROD, "prod", 3, 0, (a) * (b))                                                               \
    X(AND, "and", 4, 1, (a) & (b))                                                                 \
    X(OR, "or", 5, 1, (a) | (b))                                                                   \
    X(XOR, "xor", 6, 1, (a) ^ (b))

/* Atomic ops: X(NAME, "name", code, operands, fetches, floats, DEVICE):
 * operands 0 (none), 1 (value) or 2 (cond and value); fetches: returns the
 * old value; floats: takes float32 and float64 besides the 32- and 64-bit
 * integers; DEVICE: the device library's instruction it runs as
 * (SYMMEM_DEVICE_ATOMICS: inc adds 1, fetch reads, and a form that does
 * not fetch drops the old value). */
#define SYMMEM_ATOMIC_OPS(X)                                                                       \
    X(FETCH, "atomic_fetch", 0, 0, 1, 1, FETCH)                                                    \
    X(SET, "atomic_set", 1, 1, 0, 1, SET)                                                          \
    X(INC, "atomic_inc", 2, 0, 0, 0, FETCH_ADD)                                                    \
    X(FETCH_INC, "atomic_fetch_inc", 3, 0, 1, 0, FETCH_ADD)                                        \
    X(ADD, "atomic_add", 4, 1, 0, 1, FETCH_ADD)                                                    \
    X(FETCH_ADD, "atomic_fetch_add", 5, 1, 1, 1, FETCH_ADD)                                        \
    X(AND, "atomic_and", 6, 1, 0, 0, FETCH_AND)                                                    \
    X(FETCH_AND, "atomic_fetch_and", 7, 1, 1, 0, FETCH_AND)                                        \
    X(OR, "atomic_or", 8, 1, 0, 0, FETCH_OR)                                                       \
    X(FETCH_OR, "atomic_fetch_or", 9, 1, 1, 0, FETCH_OR)                                           \
    X(XOR, "atomic_xor", 10, 1, 0, 0, FETCH_XOR)                                                   \
    X(FETCH_XOR, "atomic_fetch_xor", 11, 1, 1, 0, FETCH_XOR)                                       \
    X(SWAP, "atomic_swap", 12, 1, 1, 1, SWAP)                                                      \
    X(COMPARE_SWAP, "atomic_compare_swap", 13, 2, 1, 0, COMPARE_SWAP)

/* The device library's atomic instructions, the op that symmem_dev_atomic32
 * and symmem_dev_atomic64 take (include/symmem/device_rma.cuh): X(NAME,
 * "name", code). Each returns the old value; FETCH_ADD_FLOAT is FETCH_ADD
 * of a float32 (atomic32) or a float64 (atomic64). */
#define SYMMEM_DEVICE_ATOMICS(X)                                                                   \
    X(FETCH, "fetch", 0)                                                                           \
    X(SET, "set", 1)                                                                               \
    X(SWAP, "swap", 2)                                                                             \
    X(COMPARE_SWAP, "compare_swap", 3)                                                             \
    X(FETCH_ADD, "fetch_add", 4)                                                                   \
    X(FETCH_AND, "fetch_and", 5)                                                                   \
    X(FETCH_OR, "fetch_or", 6)                                                                     \
    X(FETCH_XOR, "fetch_xor", 7)                                                                   \
    X(FETCH_ADD_FLOAT, "fetch_add_float", 8)

/* Signal ops (NVSHMEM's numbers): X(NAME, "name", code). */
#define SYMMEM_SIGNAL_OPS(X)                                                                       \
    X(SET, "SIGNAL_SET", 9)                                                                        \
    X(ADD, "SIGNAL_ADD", 10)

/* Comparisons of wait_until, test and signal_wait: X(NAME, "name", code,
 * operator), the operator between the value found and the one given. */
#define SYMMEM_COMPARISONS(X)                                                                      \
    X(EQ, "CMP_EQ", 0, ==)                                                                         \
    X(NE, "CMP_NE", 1, !=)                                                                         \
    X(GT, "CMP_GT", 2, >)                                                                          \
    X(LE, "CMP_LE", 3, <=)                                                                         \
    X(LT, "CMP_LT", 4, <)                                                                          \
    X(GE, "CMP_GE", 5, >=)

/* The collectives a fingerprint names (src/core/calls.h): X(NAME, "name",
 * code, SHAPE, moves_data). SHAPE says what the fingerprint's words hold
 * (calls.c describes each): PLAIN (nothing), REDUCTION (op, dtype,
 * elements, team), ROOTED (bytes, root, team), BYTES (bytes, team), TEAM,
 * PES (PEs of a new team), OF_TEAM (the parent team). moves_data: a
 * collective that moves data, which NVSHMEM runs on NCCL. */
#define SYMMEM_CALL_KINDS(X)                                                                       \
    X(INIT, "init", 1, PLAIN, 0)                                                                   \
    X(BARRIER_ALL, "barrier_all", 2, PLAIN, 0)                                                     \
    X(SYNC_ALL, "sync_all", 3, PLAIN, 0)                                                           \
    X(BARRIER, "barrier", 4, TEAM, 0)                                                              \
    X(SYNC, "sync", 5, TEAM, 0)                                                                    \
    X(REDUCE, "reduce", 6, REDUCTION, 1)                                                           \
    X(REDUCESCATTER, "reducescatter", 7, REDUCTION, 1)                                             \
    X(BROADCAST, "broadcast", 8, ROOTED, 1)                                                        \
    X(ALLTOALL, "alltoall", 9, BYTES, 1)                                                           \
    X(FCOLLECT, "fcollect", 10, BYTES, 1)                                                          \
    X(MALLOC, "malloc", 11, PLAIN, 0)                                                              \
    X(FREE, "free", 12, PLAIN, 0)                                                                  \
    X(TEAM_SPLIT, "team_split", 13, OF_TEAM, 0)                                                    \
    X(TEAM_DESTROY, "team_destroy", 14, TEAM, 0)                                                   \
    X(TEAM_INIT, "team_init", 15, PES, 0)

/* What a backend can do (its ops table's capabilities, symmem_capabilities()):
 * X(NAME, "name", bit, "what it means"). */
#define SYMMEM_CAPABILITIES(X)                                                                     \
    X(DEVICE_MEMORY, "device_memory", 0,                                                           \
      "the symmetric heap is GPU memory: arrays over it are CUDA arrays")                          \
    X(PEER_LOAD_STORE, "peer_load_store", 1,                                                       \
      "a PE can load and store its peers' heaps (symmem_ptr, peer views)")                         \
    X(HOST_RMA, "host_rma", 2,                                                                     \
      "one-sided calls are this process's own loads and stores and never wait")                    \
    X(DEVICE_CALLS, "device_calls", 3,                                                             \
      "GPU kernels call symmem (the CUDA device library, CUDA modules, Triton)")                   \
    X(STREAM_ORDERED, "stream_ordered", 4,                                                         \
      "calls run in order on CUDA streams and can be captured in CUDA graphs")                     \
    X(MULTICAST, "multicast", 5, "NVLink multicast memory spans a team's GPUs")                    \
    X(SPANS_HOSTS, "spans_hosts", 6, "the PEs of a job may run on several hosts")                  \
    X(MPI_PROCESSES, "mpi_processes", 7,                                                           \
      "the PEs are MPI processes: mpirun starts them, and init can make them of a communicator")

/* ---- the C enums, made from the lists ---- */

#define SYMMEM__VOCAB_DTYPE(NAME, name, code, size, ctype, nvshmem, kind)                          \
    SYMMEM_DTYPE_##NAME = code,
typedef enum { SYMMEM_DTYPES(SYMMEM__VOCAB_DTYPE) SYMMEM_DTYPE_COUNT } symmem_dtype_t;
#undef SYMMEM__VOCAB_DTYPE

#define SYMMEM__VOCAB_OP(NAME, name, code, bitwise, combine) SYMMEM_OP_##NAME = code,
typedef enum { SYMMEM_REDUCE_OPS(SYMMEM__VOCAB_OP) SYMMEM_OP_COUNT } symmem_reduce_op_t;
#undef SYMMEM__VOCAB_OP

#define SYMMEM__VOCAB_ATOMIC(NAME, name, code, operands, fetches, floats, device)                  \
    SYMMEM_ATOMIC_##NAME = code,
typedef enum { SYMMEM_ATOMIC_OPS(SYMMEM__VOCAB_ATOMIC) SYMMEM_ATOMIC_COUNT } symmem_atomic_op_t;
#undef SYMMEM__VOCAB_ATOMIC

#define SYMMEM__VOCAB_DEV_ATOMIC(NAME, name, code) SYMMEM_DEV_ATOMIC_##NAME = code,
typedef enum {
    SYMMEM_DEVICE_ATOMICS(SYMMEM__VOCAB_DEV_ATOMIC) SYMMEM_DEV_ATOMIC_COUNT
} symmem_dev_atomic_t;
#undef SYMMEM__VOCAB_DEV_ATOMIC

#define SYMMEM__VOCAB_SIGNAL(NAME, name, code) SYMMEM_SIGNAL_##NAME = code,
typedef enum { SYMMEM_SIGNAL_OPS(SYMMEM__VOCAB_SIGNAL) } symmem_signal_op_t;
#undef SYMMEM__VOCAB_SIGNAL

#define SYMMEM__VOCAB_CMP(NAME, name, code, op) SYMMEM_CMP_##NAME = code,
typedef enum { SYMMEM_COMPARISONS(SYMMEM__VOCAB_CMP) SYMMEM_CMP_COUNT } symmem_cmp_t;
#undef SYMMEM__VOCAB_CMP

#define SYMMEM__VOCAB_CAP(NAME, name, bit, help) SYMMEM_CAP_##NAME = 1u << (bit),
typedef enum { SYMMEM_CAPABILITIES(SYMMEM__VOCAB_CAP) } symmem_capability_t;
#undef SYMMEM__VOCAB_CAP

#endif /* SYMMEM_VOCABULARY_H */

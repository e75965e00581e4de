/* Atomics straight on a peer's mapping with the compiler's __atomic
 * builtins, which are atomic across processes sharing the memory. Float
 * add is a compare-and-swap loop on the bits. */
#include <string.h>

#include "../../core/error.h"
#include "cpu.h"

#define ORDER __ATOMIC_SEQ_CST

/* The integer operations for one width; value/cond hold the element's bits. */
#define INTEGER_ATOMIC(NAME, T)                                                                    \
    static uint64_t NAME(symmem_atomic_op_t op, T *p, T v, T cond)                                 \
    {                                                                                              \
        switch (op) {                                                                              \
        case SYMMEM_ATOMIC_FETCH: return (uint64_t)__atomic_load_n(p, ORDER);                      \
        case SYMMEM_ATOMIC_SET: __atomic_store_n(p, v, ORDER); return 0;                           \
        case SYMMEM_ATOMIC_INC:                                                                    \
        case SYMMEM_ATOMIC_FETCH_INC: return (uint64_t)__atomic_fetch_add(p, (T)1, ORDER);         \
        case SYMMEM_ATOMIC_ADD:                                                                    \
        case SYMMEM_ATOMIC_FETCH_ADD: return (uint64_t)__atomic_fetch_add(p, v, ORDER);            \
        case SYMMEM_ATOMIC_AND:                                                                    \
        case SYMMEM_ATOMIC_FETCH_AND: return (uint64_t)__atomic_fetch_and(p, v, ORDER);            \
        case SYMMEM_ATOMIC_OR:                                                                     \
        case SYMMEM_ATOMIC_FETCH_OR: return (uint64_t)__atomic_fetch_or(p, v, ORDER);              \
        case SYMMEM_ATOMIC_XOR:                                                                    \
        case SYMMEM_ATOMIC_FETCH_XOR: return (uint64_t)__atomic_fetch_xor(p, v, ORDER);            \
        case SYMMEM_ATOMIC_SWAP: return (uint64_t)__atomic_exchange_n(p, v, ORDER);                \
        case SYMMEM_ATOMIC_COMPARE_SWAP: {                                                         \
            T expected = cond;                                                                     \
            __atomic_compare_exchange_n(p, &expected, v, 0, ORDER, ORDER);                         \
            return (uint64_t)expected; /* the old value either way */                              \
        }                                                                                          \
        default: return 0;                                                                         \
        }                                                                                          \
    }

INTEGER_ATOMIC(atomic_u32, uint32_t)
INTEGER_ATOMIC(atomic_u64, uint64_t)

/* float32/float64: FETCH, SET and SWAP move bits; ADD loops on CAS. */
#define FLOAT_ATOMIC(NAME, F, U, NAME_INT)                                                         \
    static uint64_t NAME(symmem_atomic_op_t op, U *p, U v)                                         \
    {                                                                                              \
        if (op != SYMMEM_ATOMIC_ADD && op != SYMMEM_ATOMIC_FETCH_ADD)                              \
            return NAME_INT(op, p, v, 0);                                                          \
        U old = __atomic_load_n(p, ORDER), next;                                                   \
        do {                                                                                       \
            F a, b;                                                                                \
            memcpy(&a, &old, sizeof(a));                                                           \
            memcpy(&b, &v, sizeof(b));                                                             \
            a += b;                                                                                \
            memcpy(&next, &a, sizeof(next));                                                       \
        } while (!__atomic_compare_exchange_n(p, &old, next, 0, ORDER, ORDER));                    \
        return (uint64_t)old;                                                                      \
    }

FLOAT_ATOMIC(atomic_f32, float, uint32_t, atomic_u32)
FLOAT_ATOMIC(atomic_f64, double, uint64_t, atomic_u64)

symmem_status_t symmem__cpu_atomic(cpu_t *cpu, symmem_atomic_op_t op, void *target,
                                   symmem_dtype_t dtype, uint64_t value, uint64_t cond, int pe,
                                   uint64_t *fetched_p)
{
    void *p = cpu_peer(cpu, target, pe);
    uint64_t old;
    switch (dtype) {
    case SYMMEM_DTYPE_INT32:
    case SYMMEM_DTYPE_UINT32: old = atomic_u32(op, p, (uint32_t)value, (uint32_t)cond); break;
    case SYMMEM_DTYPE_FLOAT32: old = atomic_f32(op, p, (uint32_t)value); break;
    case SYMMEM_DTYPE_FLOAT64: old = atomic_f64(op, p, value); break;
    default: old = atomic_u64(op, p, value, cond); break;
    }
    if (fetched_p) *fetched_p = old;
    /* A waiter on PE pe may be watching this element (wait_until). */
    if (op != SYMMEM_ATOMIC_FETCH) symmem__cpu_ring(cpu, pe, CPU_WAIT_DATA);
    return SYMMEM_OK;
}

/* acc = acc op in, element-wise, for every dtype and op. float16 and
 * bfloat16 are reduced in float32 and rounded back to nearest even. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bfloat16.h"
#include "float16.h"
#include "reduce_kernels.h"

/* Integer sum and prod wrap, as in NumPy: computed in the unsigned type U
 * (at least unsigned int, so no promotion to a signed int), where overflow is
 * defined; signed overflow would be undefined behaviour. */
#define ARITH_LOOPS(T, U)                                                                          \
    case SYMMEM_OP_SUM:                                                                            \
        for (size_t i = 0; i < n; i++) a[i] = (T)((U)a[i] + (U)b[i]);                              \
        return;                                                                                    \
    case SYMMEM_OP_PROD:                                                                           \
        for (size_t i = 0; i < n; i++) a[i] = (T)((U)a[i] * (U)b[i]);                              \
        return;                                                                                    \
    case SYMMEM_OP_MIN:                                                                            \
        for (size_t i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i];                           \
        return;                                                                                    \
    case SYMMEM_OP_MAX:                                                                            \
        for (size_t i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i];                           \
        return;

#define INTEGER_KERNEL(NAME, T, U)                                                                 \
    static void NAME(T *restrict a, const T *restrict b, size_t n, symmem_reduce_op_t op)          \
    {                                                                                              \
        switch (op) {                                                                              \
            ARITH_LOOPS(T, U)                                                                      \
        case SYMMEM_OP_AND:                                                                        \
            for (size_t i = 0; i < n; i++) a[i] &= b[i];                                           \
            return;                                                                                \
        case SYMMEM_OP_OR:                                                                         \
            for (size_t i = 0; i < n; i++) a[i] |= b[i];                                           \
            return;                                                                                \
        case SYMMEM_OP_XOR:                                                                        \
            for (size_t i = 0; i < n; i++) a[i] ^= b[i];                                           \
            return;                                                                                \
        default: return;                                                                           \
        }                                                                                          \
    }

/* NaN propagates through min and max, as in NumPy. */
#define FLOAT_KERNEL(NAME, T)                                                                      \
    static void NAME(T *restrict a, const T *restrict b, size_t n, symmem_reduce_op_t op)          \
    {                                                                                              \
        switch (op) {                                                                              \
        case SYMMEM_OP_SUM:                                                                        \
            for (size_t i = 0; i < n; i++) a[i] += b[i];                                           \
            return;                                                                                \
        case SYMMEM_OP_PROD:                                                                       \
            for (size_t i = 0; i < n; i++) a[i] *= b[i];                                           \
            return;                                                                                \
        case SYMMEM_OP_MIN:                                                                        \
            for (size_t i = 0; i < n; i++) a[i] = (b[i] < a[i] || isnan(b[i])) ? b[i] : a[i];      \
            return;                                                                                \
        case SYMMEM_OP_MAX:                                                                        \
            for (size_t i = 0; i < n; i++) a[i] = (b[i] > a[i] || isnan(b[i])) ? b[i] : a[i];      \
            return;                                                                                \
        default: return;                                                                           \
        }                                                                                          \
    }

/* A kernel per integer and float dtype of the vocabulary, by its kind: the
 * integers wrap in the unsigned type of their size (at least unsigned). */
#define WRAP_1 unsigned
#define WRAP_2 unsigned
#define WRAP_4 uint32_t
#define WRAP_8 uint64_t
#define KERNEL_OF(NAME, name, code, size, ctype, nvshmem, kind) KERNEL_##kind(NAME, ctype, size)
#define KERNEL_INT(NAME, T, size) INTEGER_KERNEL(reduce_##NAME, T, WRAP_##size)
#define KERNEL_UINT(NAME, T, size) INTEGER_KERNEL(reduce_##NAME, T, WRAP_##size)
#define KERNEL_FLOAT(NAME, T, size) FLOAT_KERNEL(reduce_##NAME, T)
#define KERNEL_BOOL(NAME, T, size)
#define KERNEL_HALF(NAME, T, size)
SYMMEM_DTYPES(KERNEL_OF)

/* bool: sum and max are "or", prod and min are "and"; results stay 0 or 1. */
static void reduce_bool(uint8_t *a, const uint8_t *b, size_t n, symmem_reduce_op_t op)
{
    for (size_t i = 0; i < n; i++) {
        int x = a[i] != 0, y = b[i] != 0;
        switch (op) {
        case SYMMEM_OP_SUM:
        case SYMMEM_OP_MAX:
        case SYMMEM_OP_OR: a[i] = (uint8_t)(x | y); break;
        case SYMMEM_OP_PROD:
        case SYMMEM_OP_MIN:
        case SYMMEM_OP_AND: a[i] = (uint8_t)(x & y); break;
        default: a[i] = (uint8_t)(x ^ y); break;
        }
    }
}

/* 16-bit floats: widen a block to float32, reduce, narrow back. */
static void reduce_f16(uint16_t *a, const uint16_t *b, size_t n, symmem_reduce_op_t op, int brain)
{
    float wa[256], wb[256];
    for (size_t done = 0; done < n; done += 256) {
        size_t m = n - done < 256 ? n - done : 256;
        for (size_t i = 0; i < m; i++) {
            wa[i] = brain ? symmem__bf16_to_float(a[done + i]) : symmem__f16_to_float(a[done + i]);
            wb[i] = brain ? symmem__bf16_to_float(b[done + i]) : symmem__f16_to_float(b[done + i]);
        }
        reduce_FLOAT32(wa, wb, m, op);
        for (size_t i = 0; i < m; i++)
            a[done + i] = brain ? symmem__float_to_bf16(wa[i]) : symmem__float_to_f16(wa[i]);
    }
}

void symmem__reduce_into(void *acc, const void *in, size_t n, symmem_dtype_t dtype,
                         symmem_reduce_op_t op)
{
    switch (dtype) {
#define CALL_OF(NAME, name, code, size, ctype, nvshmem, kind)                                      \
    case code: CALL_##kind(NAME); return;
#define CALL_INT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_UINT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_FLOAT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_BOOL(NAME) reduce_bool(acc, in, n, op)
#define CALL_HALF(NAME) reduce_f16(acc, in, n, op, SYMMEM_DTYPE_##NAME == SYMMEM_DTYPE_BFLOAT16)
        SYMMEM_DTYPES(CALL_OF)
    default: return;
    }
}

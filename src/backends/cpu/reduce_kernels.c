/* acc = acc op in, element-wise, for every dtype and op. float16 and
 * bfloat16 are reduced in float32 and rounded back to nearest even. */
#include <math.h>
#include <string.h>

#include "../../core/bfloat16.h"
#include "../../core/float16.h"
#include "cpu.h"

/* Integer sum and prod wrap, as in NumPy: computed in the unsigned type U
 * (at least unsigned int, so no promotion to a signed int), where overflow is
 * defined; signed overflow would be undefined behaviour. */
#define ARITH_LOOPS(T, U)                                                                   \
    case SYMMEM_OP_SUM: for (size_t i = 0; i < n; i++) a[i] = (T)((U)a[i] + (U)b[i]); return; \
    case SYMMEM_OP_PROD: for (size_t i = 0; i < n; i++) a[i] = (T)((U)a[i] * (U)b[i]); return; \
    case SYMMEM_OP_MIN: for (size_t i = 0; i < n; i++) a[i] = b[i] < a[i] ? b[i] : a[i]; return; \
    case SYMMEM_OP_MAX: for (size_t i = 0; i < n; i++) a[i] = b[i] > a[i] ? b[i] : a[i]; return;

#define INTEGER_KERNEL(NAME, T, U)                                                           \
    static void NAME(T *restrict a, const T *restrict b, size_t n, symmem_reduce_op_t op)   \
    {                                                                                       \
        switch (op) {                                                                       \
            ARITH_LOOPS(T, U)                                                               \
        case SYMMEM_OP_AND: for (size_t i = 0; i < n; i++) a[i] &= b[i]; return;            \
        case SYMMEM_OP_OR: for (size_t i = 0; i < n; i++) a[i] |= b[i]; return;             \
        case SYMMEM_OP_XOR: for (size_t i = 0; i < n; i++) a[i] ^= b[i]; return;            \
        default: return;                                                                    \
        }                                                                                   \
    }

/* NaN propagates through min and max, as in NumPy. */
#define FLOAT_KERNEL(NAME, T)                                                               \
    static void NAME(T *restrict a, const T *restrict b, size_t n, symmem_reduce_op_t op)   \
    {                                                                                       \
        switch (op) {                                                                       \
        case SYMMEM_OP_SUM: for (size_t i = 0; i < n; i++) a[i] += b[i]; return;            \
        case SYMMEM_OP_PROD: for (size_t i = 0; i < n; i++) a[i] *= b[i]; return;           \
        case SYMMEM_OP_MIN:                                                                 \
            for (size_t i = 0; i < n; i++) a[i] = (b[i] < a[i] || isnan(b[i])) ? b[i] : a[i]; \
            return;                                                                         \
        case SYMMEM_OP_MAX:                                                                 \
            for (size_t i = 0; i < n; i++) a[i] = (b[i] > a[i] || isnan(b[i])) ? b[i] : a[i]; \
            return;                                                                         \
        default: return;                                                                    \
        }                                                                                   \
    }

INTEGER_KERNEL(reduce_i8, int8_t, unsigned)
INTEGER_KERNEL(reduce_i16, int16_t, unsigned)
INTEGER_KERNEL(reduce_i32, int32_t, uint32_t)
INTEGER_KERNEL(reduce_i64, int64_t, uint64_t)
INTEGER_KERNEL(reduce_u8, uint8_t, unsigned)
INTEGER_KERNEL(reduce_u16, uint16_t, unsigned)
INTEGER_KERNEL(reduce_u32, uint32_t, uint32_t)
INTEGER_KERNEL(reduce_u64, uint64_t, uint64_t)
FLOAT_KERNEL(reduce_f32, float)
FLOAT_KERNEL(reduce_f64, double)

/* bool: sum and max are "or", prod and min are "and"; results stay 0 or 1. */
static void reduce_bool(uint8_t *a, const uint8_t *b, size_t n, symmem_reduce_op_t op)
{
    for (size_t i = 0; i < n; i++) {
        int x = a[i] != 0, y = b[i] != 0;
        switch (op) {
        case SYMMEM_OP_SUM: case SYMMEM_OP_MAX: case SYMMEM_OP_OR: a[i] = (uint8_t)(x | y); break;
        case SYMMEM_OP_PROD: case SYMMEM_OP_MIN: case SYMMEM_OP_AND: a[i] = (uint8_t)(x & y); break;
        default: a[i] = (uint8_t)(x ^ y); break;
        }
    }
}

/* 16-bit floats: widen a block to float32, reduce, narrow back. */
static void reduce_f16(uint16_t *a, const uint16_t *b, size_t n, symmem_reduce_op_t op,
                       int brain)
{
    float wa[256], wb[256];
    for (size_t done = 0; done < n; done += 256) {
        size_t m = n - done < 256 ? n - done : 256;
        for (size_t i = 0; i < m; i++) {
            wa[i] = brain ? symmem__bf16_to_float(a[done + i]) : symmem__f16_to_float(a[done + i]);
            wb[i] = brain ? symmem__bf16_to_float(b[done + i]) : symmem__f16_to_float(b[done + i]);
        }
        reduce_f32(wa, wb, m, op);
        for (size_t i = 0; i < m; i++)
            a[done + i] = brain ? symmem__float_to_bf16(wa[i]) : symmem__float_to_f16(wa[i]);
    }
}

void symmem__cpu_reduce_into(void *acc, const void *in, size_t n, symmem_dtype_t dtype,
                     symmem_reduce_op_t op)
{
    switch (dtype) {
    case SYMMEM_DTYPE_BOOL: reduce_bool(acc, in, n, op); return;
    case SYMMEM_DTYPE_INT8: reduce_i8(acc, in, n, op); return;
    case SYMMEM_DTYPE_INT16: reduce_i16(acc, in, n, op); return;
    case SYMMEM_DTYPE_INT32: reduce_i32(acc, in, n, op); return;
    case SYMMEM_DTYPE_INT64: reduce_i64(acc, in, n, op); return;
    case SYMMEM_DTYPE_UINT8: reduce_u8(acc, in, n, op); return;
    case SYMMEM_DTYPE_UINT16: reduce_u16(acc, in, n, op); return;
    case SYMMEM_DTYPE_UINT32: reduce_u32(acc, in, n, op); return;
    case SYMMEM_DTYPE_UINT64: reduce_u64(acc, in, n, op); return;
    case SYMMEM_DTYPE_FLOAT16: reduce_f16(acc, in, n, op, 0); return;
    case SYMMEM_DTYPE_BFLOAT16: reduce_f16(acc, in, n, op, 1); return;
    case SYMMEM_DTYPE_FLOAT32: reduce_f32(acc, in, n, op); return;
    case SYMMEM_DTYPE_FLOAT64: reduce_f64(acc, in, n, op); return;
    default: return;
    }
}

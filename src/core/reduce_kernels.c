/* The host's reductions in the one order of docs/reproducibility.md:
 * element i of the result is member 0's element i, combined with member 1's,
 * then member 2's, ..., left to right; float16 and bfloat16 accumulate in
 * float32 and are rounded to nearest even once, at the end. The same order
 * and combine as the GPU kernels' (symmem/vocabulary.h's combine column), so
 * every backend gives the same bits for the same data. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "bfloat16.h"
#include "float16.h"
#include "reduce_kernels.h"
#include "vocab.h"

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

/* NaN propagates through min and max, as in NumPy; of equal values (+0 and
 * -0) the accumulator's stays: vocabulary.h's combine column, exactly. */
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

/* acc[i] = acc[i] op in[i], n elements, one dtype's loop. */
static void combine_into(void *acc, const void *in, size_t n, symmem_dtype_t dtype,
                         symmem_reduce_op_t op)
{
    switch (dtype) {
#define CALL_OF(NAME, name, code, size, ctype, nvshmem, kind)                                      \
    case code: CALL_##kind(NAME); return;
#define CALL_INT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_UINT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_FLOAT(NAME) reduce_##NAME(acc, in, n, op)
#define CALL_BOOL(NAME) reduce_bool(acc, in, n, op)
#define CALL_HALF(NAME) reduce_FLOAT32(acc, in, n, op) /* widened: float32 */
        SYMMEM_DTYPES(CALL_OF)
    default: return;
    }
}

/* The accumulator's block: 16 KiB, in L1 while every member's block is
 * combined into it, and long enough that the calls per block cost nothing
 * (at 2 KiB they cost the float32 sum 10%). 16-bit floats widen HALF_BLOCK
 * elements at a time into float32, on the stack. */
#define BLOCK_BYTES (16 * 1024)
#define HALF_BLOCK 2048

static void widen(float *to, const uint16_t *from, size_t n, int brain)
{
    if (brain)
        for (size_t i = 0; i < n; i++) to[i] = symmem__bf16_to_float(from[i]);
    else
        for (size_t i = 0; i < n; i++) to[i] = symmem__f16_to_float(from[i]);
}

static void narrow(uint16_t *to, const float *from, size_t n, int brain)
{
    if (brain)
        for (size_t i = 0; i < n; i++) to[i] = symmem__float_to_bf16(from[i]);
    else
        for (size_t i = 0; i < n; i++) to[i] = symmem__float_to_f16(from[i]);
}

/* float16 and bfloat16: every member's block widened and combined in
 * float32, rounded once. */
static void reduce_half(uint16_t *dst, const void *const *srcs, int n, size_t count,
                        symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    int brain = dtype == SYMMEM_DTYPE_BFLOAT16;
    _Alignas(64) float acc[HALF_BLOCK], more[HALF_BLOCK];
    for (size_t done = 0; done < count; done += HALF_BLOCK) {
        size_t m = count - done < HALF_BLOCK ? count - done : HALF_BLOCK;
        widen(acc, (const uint16_t *)srcs[0] + done, m, brain);
        for (int j = 1; j < n; j++) {
            widen(more, (const uint16_t *)srcs[j] + done, m, brain);
            combine_into(acc, more, m, dtype, op);
        }
        narrow(dst + done, acc, m, brain);
    }
}

void symmem__reduce_members(void *dst, const void *const *srcs, int n, size_t count,
                            symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    if (dtype == SYMMEM_DTYPE_FLOAT16 || dtype == SYMMEM_DTYPE_BFLOAT16) {
        reduce_half(dst, srcs, n, count, dtype, op);
        return;
    }
    size_t size = symmem__dtype_bytes(dtype), block = BLOCK_BYTES / size;
    _Alignas(64) char acc[BLOCK_BYTES];
    /* dst itself accumulates unless a later member's src is dst (in place
     * on a member past the first): then each block goes through acc */
    int through_acc = 0;
    for (int j = 1; j < n; j++) through_acc |= srcs[j] == dst;
    for (size_t done = 0; done < count; done += block) {
        size_t m = count - done < block ? count - done : block, at = done * size;
        char *into = through_acc ? acc : (char *)dst + at;
        if (into != (const char *)srcs[0] + at) memcpy(into, (const char *)srcs[0] + at, m * size);
        for (int j = 1; j < n; j++) combine_into(into, (const char *)srcs[j] + at, m, dtype, op);
        if (through_acc) memcpy((char *)dst + at, acc, m * size);
    }
}

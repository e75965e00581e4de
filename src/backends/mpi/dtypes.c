/* symmem's dtypes and reduction ops as MPI's. MPI's predefined ops serve
 * the integers and float sums and products; where MPI has no type (float16,
 * bfloat16) or means something else (bool's sum is "or"; NaN wins min and
 * max, as in NumPy and the cpu engine), the op is user-defined here. */
#include <math.h>

#include "../../core/bfloat16.h"
#include "../../core/float16.h"
#include "mpi_backend.h"

MPI_Datatype symmem__mpi_datatype(symmem_dtype_t dtype)
{
    switch (dtype) {
    case SYMMEM_DTYPE_BOOL: return MPI_UINT8_T; /* reduced by own ops only */
    case SYMMEM_DTYPE_INT8: return MPI_INT8_T;
    case SYMMEM_DTYPE_INT16: return MPI_INT16_T;
    case SYMMEM_DTYPE_INT32: return MPI_INT32_T;
    case SYMMEM_DTYPE_INT64: return MPI_INT64_T;
    case SYMMEM_DTYPE_UINT8: return MPI_UINT8_T;
    case SYMMEM_DTYPE_UINT16: return MPI_UINT16_T;
    case SYMMEM_DTYPE_UINT32: return MPI_UINT32_T;
    case SYMMEM_DTYPE_UINT64: return MPI_UINT64_T;
    case SYMMEM_DTYPE_FLOAT16:
    case SYMMEM_DTYPE_BFLOAT16: return MPI_UINT16_T; /* own ops only */
    case SYMMEM_DTYPE_FLOAT32: return MPI_FLOAT;
    case SYMMEM_DTYPE_FLOAT64: return MPI_DOUBLE;
    default: return MPI_DATATYPE_NULL;
    }
}

static float widen(uint16_t v, int brain)
{
    return brain ? symmem__bf16_to_float(v) : symmem__f16_to_float(v);
}

static uint16_t narrow(float f, int brain)
{
    return brain ? symmem__float_to_bf16(f) : symmem__float_to_f16(f);
}

/* a = a op b in float (float16 and bfloat16 go through float32). */
static float float_op(float a, float b, symmem_reduce_op_t op)
{
    switch (op) {
    case SYMMEM_OP_SUM: return a + b;
    case SYMMEM_OP_PROD: return a * b;
    case SYMMEM_OP_MIN: return (b < a || isnan(b)) ? b : a;
    default: return (b > a || isnan(b)) ? b : a; /* max */
    }
}

#define HALF_OP(NAME, BRAIN, OP)                                                                   \
    static void NAME(void *in, void *inout, int *len, MPI_Datatype *type)                          \
    {                                                                                              \
        (void)type;                                                                                \
        const uint16_t *b = in;                                                                    \
        uint16_t *a = inout;                                                                       \
        for (int i = 0; i < *len; i++)                                                             \
            a[i] = narrow(float_op(widen(a[i], BRAIN), widen(b[i], BRAIN), OP), BRAIN);            \
    }
#define FLOAT_OP(NAME, T, OP)                                                                      \
    static void NAME(void *in, void *inout, int *len, MPI_Datatype *type)                          \
    {                                                                                              \
        (void)type;                                                                                \
        const T *b = in;                                                                           \
        T *a = inout;                                                                              \
        for (int i = 0; i < *len; i++)                                                             \
            a[i] = OP == SYMMEM_OP_MIN ? ((b[i] < a[i] || isnan(b[i])) ? b[i] : a[i])              \
                                       : ((b[i] > a[i] || isnan(b[i])) ? b[i] : a[i]);             \
    }
/* bool: sum and max are "or", prod and min are "and"; results stay 0 or 1. */
#define BOOL_OP(NAME, EXPR)                                                                        \
    static void NAME(void *in, void *inout, int *len, MPI_Datatype *type)                          \
    {                                                                                              \
        (void)type;                                                                                \
        const uint8_t *b = in;                                                                     \
        uint8_t *a = inout;                                                                        \
        for (int i = 0; i < *len; i++) {                                                           \
            int x = a[i] != 0, y = b[i] != 0;                                                      \
            a[i] = (uint8_t)(EXPR);                                                                \
        }                                                                                          \
    }

HALF_OP(f16_sum, 0, SYMMEM_OP_SUM)
HALF_OP(f16_prod, 0, SYMMEM_OP_PROD)
HALF_OP(f16_min, 0, SYMMEM_OP_MIN)
HALF_OP(f16_max, 0, SYMMEM_OP_MAX)
HALF_OP(bf16_sum, 1, SYMMEM_OP_SUM)
HALF_OP(bf16_prod, 1, SYMMEM_OP_PROD)
HALF_OP(bf16_min, 1, SYMMEM_OP_MIN)
HALF_OP(bf16_max, 1, SYMMEM_OP_MAX)
FLOAT_OP(f32_min, float, SYMMEM_OP_MIN)
FLOAT_OP(f32_max, float, SYMMEM_OP_MAX)
FLOAT_OP(f64_min, double, SYMMEM_OP_MIN)
FLOAT_OP(f64_max, double, SYMMEM_OP_MAX)
BOOL_OP(bool_or, x | y)
BOOL_OP(bool_and, x &y)
BOOL_OP(bool_xor, x ^ y)

static const struct {
    symmem_dtype_t dtype;
    symmem_reduce_op_t op;
    MPI_User_function *fn;
} own[] = {
    {SYMMEM_DTYPE_FLOAT16, SYMMEM_OP_SUM, f16_sum},
    {SYMMEM_DTYPE_FLOAT16, SYMMEM_OP_PROD, f16_prod},
    {SYMMEM_DTYPE_FLOAT16, SYMMEM_OP_MIN, f16_min},
    {SYMMEM_DTYPE_FLOAT16, SYMMEM_OP_MAX, f16_max},
    {SYMMEM_DTYPE_BFLOAT16, SYMMEM_OP_SUM, bf16_sum},
    {SYMMEM_DTYPE_BFLOAT16, SYMMEM_OP_PROD, bf16_prod},
    {SYMMEM_DTYPE_BFLOAT16, SYMMEM_OP_MIN, bf16_min},
    {SYMMEM_DTYPE_BFLOAT16, SYMMEM_OP_MAX, bf16_max},
    {SYMMEM_DTYPE_FLOAT32, SYMMEM_OP_MIN, f32_min},
    {SYMMEM_DTYPE_FLOAT32, SYMMEM_OP_MAX, f32_max},
    {SYMMEM_DTYPE_FLOAT64, SYMMEM_OP_MIN, f64_min},
    {SYMMEM_DTYPE_FLOAT64, SYMMEM_OP_MAX, f64_max},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_SUM, bool_or},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_MAX, bool_or},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_OR, bool_or},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_PROD, bool_and},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_MIN, bool_and},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_AND, bool_and},
    {SYMMEM_DTYPE_BOOL, SYMMEM_OP_XOR, bool_xor},
};

symmem_status_t symmem__mpi_ops_create(mpi_t *m)
{
    for (size_t i = 0; i < sizeof(own) / sizeof(own[0]); i++)
        MPI_TRY("init", "MPI_Op_create",
                MPI_Op_create(own[i].fn, 1, &m->own_ops[own[i].dtype][own[i].op]));
    return SYMMEM_OK;
}

void symmem__mpi_ops_free(mpi_t *m)
{
    for (int d = 0; d < SYMMEM_DTYPE_COUNT; d++)
        for (int o = 0; o < SYMMEM_OP_COUNT; o++)
            if (m->own_ops[d][o] != MPI_OP_NULL) MPI_Op_free(&m->own_ops[d][o]);
}

MPI_Op symmem__mpi_op(mpi_t *m, symmem_dtype_t dtype, symmem_reduce_op_t op)
{
    if (m->own_ops[dtype][op] != MPI_OP_NULL) return m->own_ops[dtype][op];
    switch (op) {
    case SYMMEM_OP_SUM: return MPI_SUM;
    case SYMMEM_OP_PROD: return MPI_PROD;
    case SYMMEM_OP_MIN: return MPI_MIN;
    case SYMMEM_OP_MAX: return MPI_MAX;
    case SYMMEM_OP_AND: return MPI_BAND;
    case SYMMEM_OP_OR: return MPI_BOR;
    default: return MPI_BXOR;
    }
}

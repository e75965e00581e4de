/* The C side of symmem's own GPU programs (programs.h): the reduce source
 * for a dtype and op, and which kernel an atomic or a put_signal runs. */
#include "programs.h"

#include <stdio.h>

/* reduce_types.cuh's codes are symmem.h's. */
_Static_assert(SYMMEM_DTYPE_BOOL == 0 && SYMMEM_DTYPE_UINT8 == 5 &&
                   SYMMEM_DTYPE_FLOAT16 == 9 && SYMMEM_DTYPE_FLOAT64 == 12 &&
                   SYMMEM_DTYPE_COUNT == 13,
               "reduce_types.cuh's dtype codes");
_Static_assert(SYMMEM_OP_SUM == 0 && SYMMEM_OP_AND == 4 && SYMMEM_OP_XOR == 6 &&
                   SYMMEM_OP_COUNT == 7,
               "reduce_types.cuh's op codes");

int symmem__gpu_reduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out, size_t size)
{
    int is_float = dtype >= SYMMEM_DTYPE_FLOAT16 && dtype <= SYMMEM_DTYPE_FLOAT64;
    int bitwise = op == SYMMEM_OP_AND || op == SYMMEM_OP_OR || op == SYMMEM_OP_XOR;
    if ((unsigned)dtype >= SYMMEM_DTYPE_COUNT || (unsigned)op >= SYMMEM_OP_COUNT ||
        (is_float && bitwise))
        return -1;
    int n = snprintf(out, size, "#define SYMMEM_REDUCE_DTYPE %d\n#define SYMMEM_REDUCE_OP %d\n%s",
                     (int)dtype, (int)op, symmem__gpu_kernel_reduce_cu);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

int symmem__gpu_atomic_kernel(symmem_atomic_op_t op, symmem_dtype_t dtype, char *name,
                              size_t size, uint64_t *value_p)
{
    int wide = dtype == SYMMEM_DTYPE_INT64 || dtype == SYMMEM_DTYPE_UINT64 ||
               dtype == SYMMEM_DTYPE_FLOAT64;
    int is_float = dtype == SYMMEM_DTYPE_FLOAT32 || dtype == SYMMEM_DTYPE_FLOAT64;
    const char *bits = wide ? "b64" : "b32";
    const char *op_name, *type = bits;
    switch (op) {
    case SYMMEM_ATOMIC_FETCH: op_name = "or"; *value_p = 0; break;
    case SYMMEM_ATOMIC_SET: case SYMMEM_ATOMIC_SWAP: op_name = "exch"; break;
    case SYMMEM_ATOMIC_INC: case SYMMEM_ATOMIC_FETCH_INC:
        op_name = "add"; type = wide ? "u64" : "u32"; *value_p = 1; break;
    case SYMMEM_ATOMIC_ADD: case SYMMEM_ATOMIC_FETCH_ADD:
        op_name = "add";
        type = is_float ? (wide ? "f64" : "f32") : (wide ? "u64" : "u32");
        break;
    case SYMMEM_ATOMIC_AND: case SYMMEM_ATOMIC_FETCH_AND: op_name = "and"; break;
    case SYMMEM_ATOMIC_OR: case SYMMEM_ATOMIC_FETCH_OR: op_name = "or"; break;
    case SYMMEM_ATOMIC_XOR: case SYMMEM_ATOMIC_FETCH_XOR: op_name = "xor"; break;
    case SYMMEM_ATOMIC_COMPARE_SWAP: op_name = "cas"; break;
    default: return -1;
    }
    snprintf(name, size, "amo_%s_%s", op_name, type);
    return 0;
}

/* put_signal.ptx's element widths, widest first (log2 of the bytes). */
static const int width_log2[] = {4, 3, 2, 0};

int symmem__gpu_put_signal_width(const void *dst, const void *src, size_t nbytes)
{
    uintptr_t bits = (uintptr_t)dst | (uintptr_t)src;
    size_t n = sizeof(width_log2) / sizeof(width_log2[0]);
    for (size_t w = 0; w + 1 < n; w++)
        if (bits % ((uintptr_t)1 << width_log2[w]) == 0 && nbytes >> width_log2[w] > 0)
            return 1 << width_log2[w];
    return 1;
}

/* The C side of symmem's own GPU programs (programs.h): the reduce source
 * for a dtype and op, and which kernel an atomic or a put_signal runs. */
#include "programs.h"

#include <stdio.h>

#include "../../../core/vocab.h"

/* reduce_types.cuh takes the codes and reads the rest from symmem/vocabulary.h. */
int symmem__gpu_reduce_cu(symmem_dtype_t dtype, symmem_reduce_op_t op, char *out, size_t size)
{
    if (!symmem__dtype_valid(dtype) || (unsigned)op >= SYMMEM_OP_COUNT ||
        (symmem__dtype_is_float(dtype) && symmem__op_is_bitwise(op)))
        return -1;
    int n = snprintf(out, size, "#define SYMMEM_REDUCE_DTYPE %d\n#define SYMMEM_REDUCE_OP %d\n%s",
                     (int)dtype, (int)op, symmem__gpu_kernel_reduce_cu);
    return n > 0 && (size_t)n < size ? 0 : -1;
}

int symmem__gpu_atomic_kernel(symmem_atomic_op_t op, symmem_dtype_t dtype, char *name, size_t size,
                              uint64_t *value_p)
{
    int wide = symmem__dtype_bytes(dtype) == 8;
    int is_float = symmem__dtype_is_float(dtype);
    const char *bits = wide ? "b64" : "b32";
    const char *op_name, *type = bits;
    switch (op) {
    case SYMMEM_ATOMIC_FETCH:
        op_name = "or";
        *value_p = 0;
        break;
    case SYMMEM_ATOMIC_SET:
    case SYMMEM_ATOMIC_SWAP: op_name = "exch"; break;
    case SYMMEM_ATOMIC_INC:
    case SYMMEM_ATOMIC_FETCH_INC:
        op_name = "add";
        type = wide ? "u64" : "u32";
        *value_p = 1;
        break;
    case SYMMEM_ATOMIC_ADD:
    case SYMMEM_ATOMIC_FETCH_ADD:
        op_name = "add";
        type = is_float ? (wide ? "f64" : "f32") : (wide ? "u64" : "u32");
        break;
    case SYMMEM_ATOMIC_AND:
    case SYMMEM_ATOMIC_FETCH_AND: op_name = "and"; break;
    case SYMMEM_ATOMIC_OR:
    case SYMMEM_ATOMIC_FETCH_OR: op_name = "or"; break;
    case SYMMEM_ATOMIC_XOR:
    case SYMMEM_ATOMIC_FETCH_XOR: op_name = "xor"; break;
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

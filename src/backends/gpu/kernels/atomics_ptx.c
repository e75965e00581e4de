/* Atomics for the gpu backend. NVSHMEM's host library has no working
 * host-initiated atomics, so a one-thread kernel performs each one with a
 * system-scope PTX atom instruction on the address nvshmem_ptr gives for the
 * target PE (any PE in this PE's NVLink domain). The PTX is made here and
 * compiled by the driver at init: no CUDA compiler is needed to build. */
#include <stdio.h>
#include <string.h>

#include "atomics.h"

/* Every (instruction, type) pair an atomic op needs, named amo_<op>_<type>. */
static const struct {
    const char *op;   /* PTX atom operation */
    const char *type; /* PTX type */
} variants[] = {
    {"or", "b32"},  {"or", "b64"},  {"exch", "b32"}, {"exch", "b64"}, {"add", "u32"},
    {"add", "u64"}, {"add", "f32"}, {"add", "f64"},  {"and", "b32"},  {"and", "b64"},
    {"xor", "b32"}, {"xor", "b64"}, {"cas", "b32"},  {"cas", "b64"},
};
#define NVARIANTS (sizeof(variants) / sizeof(variants[0]))

/* One kernel: (target, value, cond, result) -> *result = old value. */
static int kernel_text(char *out, size_t size, const char *op, const char *type)
{
    int wide = type[1] == '6';
    const char *reg = type[0] == 'f' ? (wide ? "%d" : "%f") : (wide ? "%x" : "%w");
    const char *move = wide ? "mov.b64" : "cvt.u32.u64";
    const char *fmove = type[0] == 'f' ? (wide ? "mov.b64" : "mov.b32") : NULL;
    char operands[96];
    if (strcmp(op, "cas") == 0) snprintf(operands, sizeof(operands), "%s2, %s1", reg, reg);
    else snprintf(operands, sizeof(operands), "%s1", reg);
    char loads[256];
    if (fmove != NULL && !wide)
        snprintf(loads, sizeof(loads),
                 "cvt.u32.u64 %%w1, %%a2; mov.b32 %%f1, %%w1;\n"
                 "cvt.u32.u64 %%w2, %%a3; mov.b32 %%f2, %%w2;\n");
    else if (fmove != NULL)
        snprintf(loads, sizeof(loads), "mov.b64 %%d1, %%a2; mov.b64 %%d2, %%a3;\n");
    else
        snprintf(loads, sizeof(loads), "%s %s1, %%a2; %s %s2, %%a3;\n", move, reg, move, reg);
    return snprintf(out, size,
                    ".visible .entry amo_%s_%s(.param .u64 t, .param .u64 v, .param .u64 c, "
                    ".param .u64 r)\n{\n"
                    ".reg .b64 %%a<5>; .reg .b32 %%w<4>; .reg .b64 %%x<4>;\n"
                    ".reg .f32 %%f<4>; .reg .f64 %%d<4>;\n"
                    "ld.param.u64 %%a1, [t]; ld.param.u64 %%a2, [v];\n"
                    "ld.param.u64 %%a3, [c]; ld.param.u64 %%a4, [r];\n"
                    "%s"
                    "atom.sys.%s.%s %s3, [%%a1], %s;\n"
                    "st.%s [%%a4], %s3;\n"
                    "ret;\n}\n",
                    op, type, loads, op, type, reg, operands, type, reg);
}

int symmem__gpu_atomics_ptx(char *out, size_t size)
{
    int n = snprintf(out, size, ".version 6.0\n.target sm_60\n.address_size 64\n");
    for (size_t i = 0; i < NVARIANTS && n < (int)size; i++)
        n += kernel_text(out + n, size - (size_t)n, variants[i].op, variants[i].type);
    return n < (int)size ? 0 : -1;
}

/* Which kernel an atomic op runs, and the value it passes. */
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

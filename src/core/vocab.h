/* symmem/vocabulary.h's lists as small inline lookups, header-only so that
 * every layer has them, the gpu backend's own shared object too (it cannot
 * call the core's functions): a dtype's size, kind and NVSHMEM name, an
 * op's name and whether it is bitwise, whether a comparison holds. */
#ifndef SYMMEM_CORE_VOCAB_H
#define SYMMEM_CORE_VOCAB_H

#include <stddef.h>
#include <stdint.h>

#include "symmem/symmem.h"

/* The dtype kinds of SYMMEM_DTYPES' last column. */
typedef enum {
    SYMMEM__KIND_BOOL,
    SYMMEM__KIND_INT,
    SYMMEM__KIND_UINT,
    SYMMEM__KIND_FLOAT,
    SYMMEM__KIND_HALF
} symmem__dtype_kind_t;

typedef struct {
    const char *name;
    size_t size;
    const char *nvshmem; /* NVSHMEM's type name in its collectives */
    symmem__dtype_kind_t kind;
} symmem__dtype_info_t;

#define SYMMEM__DTYPE_INFO(NAME, name, code, size, ctype, nvshmem, kind)                           \
    [code] = {name, size, nvshmem, SYMMEM__KIND_##kind},
static const symmem__dtype_info_t symmem__dtype_info[SYMMEM_DTYPE_COUNT] = {
    SYMMEM_DTYPES(SYMMEM__DTYPE_INFO)};
#undef SYMMEM__DTYPE_INFO

static inline int symmem__dtype_valid(int dtype)
{
    return (unsigned)dtype < SYMMEM_DTYPE_COUNT;
}
/* Bytes of an element; 0 for no dtype. */
static inline size_t symmem__dtype_bytes(int dtype)
{
    return symmem__dtype_valid(dtype) ? symmem__dtype_info[dtype].size : 0;
}
static inline int symmem__dtype_is_float(int dtype)
{
    return symmem__dtype_valid(dtype) && (symmem__dtype_info[dtype].kind == SYMMEM__KIND_FLOAT ||
                                          symmem__dtype_info[dtype].kind == SYMMEM__KIND_HALF);
}
/* A signed or unsigned integer (not bool). */
static inline int symmem__dtype_is_integer(int dtype)
{
    return symmem__dtype_valid(dtype) && (symmem__dtype_info[dtype].kind == SYMMEM__KIND_INT ||
                                          symmem__dtype_info[dtype].kind == SYMMEM__KIND_UINT);
}
static inline int symmem__dtype_is_signed(int dtype)
{
    return symmem__dtype_valid(dtype) && symmem__dtype_info[dtype].kind == SYMMEM__KIND_INT;
}

#define SYMMEM__OP_BITWISE(NAME, name, code, bitwise, combine) [code] = bitwise,
static const unsigned char symmem__op_bitwise[SYMMEM_OP_COUNT] = {
    SYMMEM_REDUCE_OPS(SYMMEM__OP_BITWISE)};
#undef SYMMEM__OP_BITWISE

#define SYMMEM__OP_WORD(NAME, name, code, bitwise, combine) [code] = name,
static const char *const symmem__op_words[SYMMEM_OP_COUNT] = {SYMMEM_REDUCE_OPS(SYMMEM__OP_WORD)};
#undef SYMMEM__OP_WORD

/* "sum", ...; "unknown" for no op. */
static inline const char *symmem__reduce_op_word(int op)
{
    return (unsigned)op < SYMMEM_OP_COUNT ? symmem__op_words[op] : "unknown";
}

/* AND, OR, XOR: integers and bool only. */
static inline int symmem__op_is_bitwise(int op)
{
    return (unsigned)op < SYMMEM_OP_COUNT && symmem__op_bitwise[op];
}

static inline int symmem__signal_op_valid(int op)
{
    switch (op) {
#define SYMMEM__SIGNAL_CASE(NAME, name, code) case code:
        SYMMEM_SIGNAL_OPS(SYMMEM__SIGNAL_CASE)
#undef SYMMEM__SIGNAL_CASE
        return 1;
    default: return 0;
    }
}

/* *holds_p = whether (found cmp given) holds, both compared as T; 0 for no
 * comparison. */
#define SYMMEM__COMPARE_AS(T, found, cmp, given, holds_p)                                          \
    do {                                                                                           \
        T symmem__a = (T)(found), symmem__b = (T)(given);                                          \
        int symmem__holds = 0;                                                                     \
        switch (cmp) {                                                                             \
            SYMMEM_COMPARISONS(SYMMEM__COMPARE_CASE) default : break;                              \
        }                                                                                          \
        *(holds_p) = symmem__holds;                                                                \
    } while (0)
#define SYMMEM__COMPARE_CASE(NAME, name, code, op)                                                 \
    case code: symmem__holds = symmem__a op symmem__b; break;

/* "==" for SYMMEM_CMP_EQ, ...; "?" for no comparison. */
static inline const char *symmem__cmp_operator(int cmp)
{
    switch (cmp) {
#define SYMMEM__CMP_TEXT(NAME, name, code, op)                                                     \
    case code: return #op;
        SYMMEM_COMPARISONS(SYMMEM__CMP_TEXT)
#undef SYMMEM__CMP_TEXT
    default: return "?";
    }
}

#endif

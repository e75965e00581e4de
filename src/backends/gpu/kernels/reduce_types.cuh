/* The variant of reduce.cu that one module holds, from SYMMEM_REDUCE_DTYPE
 * and SYMMEM_REDUCE_OP (symmem/vocabulary.h's codes, which the gpu backend
 * defines before the source), made from the vocabulary's rows: T, the
 * element type; ACC, the type two elements are combined in; TO_ACC and
 * FROM_ACC, the conversions between them; COMBINE(a, b), the op on two
 * ACCs. float16 and bfloat16 are stored as u16 (reduce.cu's conversions)
 * and combined in float. bool takes the ops of 0 and 1 (the backend passes
 * or for sum and max, and for min and prod). */
#ifndef SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH
#define SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH

#include "meet.cuh" /* u16 */
#include "symmem/vocabulary.h"

/* T: the c_type of SYMMEM_REDUCE_DTYPE's row of SYMMEM_DTYPES (a code no
 * row has leaves symmem__element undefined: a compile error). */
template <int D> struct symmem__element;
#define SYMMEM__ELEMENT(NAME, name, code, size, ctype, nvshmem, kind)                       \
    template <> struct symmem__element<code> {                                              \
        typedef ctype type;                                                                 \
        static const bool is_float = SYMMEM__IS_FLOAT_##kind;                               \
    };
#define SYMMEM__IS_FLOAT_BOOL false
#define SYMMEM__IS_FLOAT_INT false
#define SYMMEM__IS_FLOAT_UINT false
#define SYMMEM__IS_FLOAT_FLOAT true
#define SYMMEM__IS_FLOAT_HALF true
SYMMEM_DTYPES(SYMMEM__ELEMENT)
#undef SYMMEM__ELEMENT
typedef symmem__element<SYMMEM_REDUCE_DTYPE>::type T;

/* ACC, TO_ACC, FROM_ACC: the element itself, but for the 16-bit floats
 * (reduce.cu's conversions, declared here). */
static __device__ __forceinline__ float half_to_float(u16 x);
static __device__ __forceinline__ u16 float_to_half(float f);
static __device__ __forceinline__ float bf16_to_float(u16 x);
static __device__ __forceinline__ u16 float_to_bf16(float f);
template <int D> struct symmem__acc {
    typedef T type;
    static __device__ __forceinline__ T to(T x) { return x; }
    static __device__ __forceinline__ T from(T x) { return x; }
};
template <> struct symmem__acc<SYMMEM_DTYPE_FLOAT16> {
    typedef float type;
    static __device__ __forceinline__ float to(u16 x) { return half_to_float(x); }
    static __device__ __forceinline__ u16 from(float x) { return float_to_half(x); }
};
template <> struct symmem__acc<SYMMEM_DTYPE_BFLOAT16> {
    typedef float type;
    static __device__ __forceinline__ float to(u16 x) { return bf16_to_float(x); }
    static __device__ __forceinline__ u16 from(float x) { return float_to_bf16(x); }
};
typedef symmem__acc<SYMMEM_REDUCE_DTYPE>::type ACC;
#define TO_ACC(x) symmem__acc<SYMMEM_REDUCE_DTYPE>::to(x)
#define FROM_ACC(x) symmem__acc<SYMMEM_REDUCE_DTYPE>::from(x)

/* COMBINE(a, b): the combine column of SYMMEM_REDUCE_OP's row of
 * SYMMEM_REDUCE_OPS. */
template <int OP> struct symmem__op;
#define SYMMEM__OP(NAME, name, code, bitwise_op, combine)                                    \
    template <> struct symmem__op<code> {                                                    \
        static const bool bitwise = bitwise_op;                                              \
        template <typename A> static __device__ __forceinline__ A f(A a, A b)               \
        {                                                                                    \
            return combine;                                                                  \
        }                                                                                    \
    };
SYMMEM_REDUCE_OPS(SYMMEM__OP)
#undef SYMMEM__OP
#define COMBINE(a, b) symmem__op<SYMMEM_REDUCE_OP>::f<ACC>((a), (b))
static_assert(!(symmem__op<SYMMEM_REDUCE_OP>::bitwise &&
                symmem__element<SYMMEM_REDUCE_DTYPE>::is_float),
              "the bitwise ops take integers and bool only");

#endif

/* The variant of reduce.cu that one module holds, from SYMMEM_REDUCE_DTYPE
 * and SYMMEM_REDUCE_OP (symmem/vocabulary.h's codes, which the gpu backend
 * defines before the source), made from the vocabulary's rows: T, the
 * element type; ACC, the type two elements are combined in; TO_ACC and
 * FROM_ACC, the conversions between them; COMBINE(a, b), the op on two
 * ACCs. float16 and bfloat16 are stored as u16 and combined in float.
 * bool takes the ops of 0 and 1 (the backend passes or for sum and max,
 * and for min and prod). VEC elements make a 16-byte
 * pack; combine_packs reduces one pack of each of n members, member 0's
 * first. Every kernel combines so, in ACC, rounding to T once: the one
 * order of docs/reproducibility.md, which makes the bits independent of
 * the kernel, grid and slice that computes an element. */
#ifndef SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH
#define SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH

#include "meet.cuh" /* u16 */
#include "symmem/vocabulary.h"

/* T: the c_type of SYMMEM_REDUCE_DTYPE's row of SYMMEM_DTYPES (a code no
 * row has leaves symmem__element undefined: a compile error). */
template <int D>
struct symmem__element;
#define SYMMEM__ELEMENT(NAME, name, code, size, ctype, nvshmem, kind)                              \
    template <>                                                                                    \
    struct symmem__element<code> {                                                                 \
        typedef ctype type;                                                                        \
        static const bool is_float = SYMMEM__IS_FLOAT_##kind;                                      \
    };
#define SYMMEM__IS_FLOAT_BOOL false
#define SYMMEM__IS_FLOAT_INT false
#define SYMMEM__IS_FLOAT_UINT false
#define SYMMEM__IS_FLOAT_FLOAT true
#define SYMMEM__IS_FLOAT_HALF true
SYMMEM_DTYPES(SYMMEM__ELEMENT)
#undef SYMMEM__ELEMENT
typedef symmem__element<SYMMEM_REDUCE_DTYPE>::type T;

/* ACC, TO_ACC, FROM_ACC: the element itself, but for the 16-bit floats,
 * combined in float. The conversions are members, not free functions: a
 * module of another dtype then holds no unreferenced static function (an
 * NVRTC warning). */
template <int D>
struct symmem__acc {
    typedef T type;
    static __device__ __forceinline__ T to(T x)
    {
        return x;
    }
    static __device__ __forceinline__ T from(T x)
    {
        return x;
    }
};
template <>
struct symmem__acc<SYMMEM_DTYPE_FLOAT16> {
    typedef float type;
    static __device__ __forceinline__ float to(u16 x)
    {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x));
        return f;
    }
    static __device__ __forceinline__ u16 from(float f)
    {
        u16 x;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x) : "f"(f));
        return x;
    }
};
template <>
struct symmem__acc<SYMMEM_DTYPE_BFLOAT16> {
    typedef float type;
    static __device__ __forceinline__ float to(u16 x)
    {
        return __uint_as_float((u32)x << 16);
    }
    /* round to nearest even; a NaN stays a NaN */
    static __device__ __forceinline__ u16 from(float f)
    {
        u32 b = __float_as_uint(f);
        if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40u);
        return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
    }
};
typedef symmem__acc<SYMMEM_REDUCE_DTYPE>::type ACC;
#define TO_ACC(x) symmem__acc<SYMMEM_REDUCE_DTYPE>::to(x)
#define FROM_ACC(x) symmem__acc<SYMMEM_REDUCE_DTYPE>::from(x)

/* COMBINE(a, b): the combine column of SYMMEM_REDUCE_OP's row of
 * SYMMEM_REDUCE_OPS. */
template <int OP>
struct symmem__op;
#define SYMMEM__OP(NAME, name, code, bitwise_op, combine)                                          \
    template <>                                                                                    \
    struct symmem__op<code> {                                                                      \
        static const bool bitwise = bitwise_op;                                                    \
        template <typename A>                                                                      \
        static __device__ __forceinline__ A f(A a, A b)                                            \
        {                                                                                          \
            return combine;                                                                        \
        }                                                                                          \
    };
SYMMEM_REDUCE_OPS(SYMMEM__OP)
#undef SYMMEM__OP
#define COMBINE(a, b) symmem__op<SYMMEM_REDUCE_OP>::f<ACC>((a), (b))
static_assert(!(symmem__op<SYMMEM_REDUCE_OP>::bitwise &&
                symmem__element<SYMMEM_REDUCE_DTYPE>::is_float),
              "the bitwise ops take integers and bool only");

#define VEC (16 / sizeof(T))
union pack {
    uint4 v;
    T e[16 / sizeof(T)];
};

/* One pack of each of members 0 .. n - 1 (in[p]), reduced in ACC. Loops
 * over PEs are unrolled to MAX_PES: indices known at compile time keep the
 * packs in registers. */
static __device__ __forceinline__ uint4 combine_packs(const uint4 *in, int n)
{
    pack out;
#pragma unroll
    for (int k = 0; k < (int)VEC; k++) {
        pack first;
        first.v = in[0];
        ACC acc = TO_ACC(first.e[k]);
#pragma unroll
        for (int p = 1; p < MAX_PES; p++)
            if (p < n) {
                pack more;
                more.v = in[p];
                ACC b = TO_ACC(more.e[k]);
                acc = COMBINE(acc, b);
            }
        out.e[k] = FROM_ACC(acc);
    }
    return out.v;
}

#endif

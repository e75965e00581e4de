/* The variant of reduce.cu that one module holds, from SYMMEM_REDUCE_DTYPE
 * and SYMMEM_REDUCE_OP (symmem.h's codes, which the gpu backend defines
 * before the source): T, the element type; ACC, the type two elements are
 * combined in; TO_ACC and FROM_ACC, the conversions between them;
 * COMBINE(a, b), the op on two ACCs. float16 and bfloat16 are stored as u16
 * (the conversions beside their types) and combined in float. bool takes the ops of
 * 0 and 1 (the backend passes or for sum and max, and for min and prod).
 * VEC elements make a 16-byte pack; combine_packs reduces one pack of each
 * of n members, member 0's first, so that every PE that reduces the same
 * packs gets the same bits. */
#ifndef SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH
#define SYMMEM_GPU_KERNELS_REDUCE_TYPES_CUH

#include "meet.cuh" /* u16 */

#if SYMMEM_REDUCE_DTYPE == 0 /* bool */
typedef unsigned char T;
typedef unsigned char ACC;
#elif SYMMEM_REDUCE_DTYPE == 1 /* int8 */
typedef signed char T;
typedef signed char ACC;
#elif SYMMEM_REDUCE_DTYPE == 2 /* int16 */
typedef short T;
typedef short ACC;
#elif SYMMEM_REDUCE_DTYPE == 3 /* int32 */
typedef int T;
typedef int ACC;
#elif SYMMEM_REDUCE_DTYPE == 4 /* int64 */
typedef long long T;
typedef long long ACC;
#elif SYMMEM_REDUCE_DTYPE == 5 /* uint8 */
typedef unsigned char T;
typedef unsigned char ACC;
#elif SYMMEM_REDUCE_DTYPE == 6 /* uint16 */
typedef unsigned short T;
typedef unsigned short ACC;
#elif SYMMEM_REDUCE_DTYPE == 7 /* uint32 */
typedef unsigned int T;
typedef unsigned int ACC;
#elif SYMMEM_REDUCE_DTYPE == 8 /* uint64 */
typedef unsigned long long T;
typedef unsigned long long ACC;
#elif SYMMEM_REDUCE_DTYPE == 9 /* float16 */
static __device__ __forceinline__ float half_to_float(u16 x)
{ float f; asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x)); return f; }
static __device__ __forceinline__ u16 float_to_half(float f)
{ u16 x; asm("cvt.rn.f16.f32 %0, %1;" : "=h"(x) : "f"(f)); return x; }
typedef u16 T;
typedef float ACC;
#define TO_ACC(x) half_to_float(x)
#define FROM_ACC(x) float_to_half(x)
#elif SYMMEM_REDUCE_DTYPE == 10 /* bfloat16 */
static __device__ __forceinline__ float bf16_to_float(u16 x)
{ return __uint_as_float((u32)x << 16); }
/* round to nearest even; a NaN stays a NaN */
static __device__ __forceinline__ u16 float_to_bf16(float f)
{ u32 b = __float_as_uint(f);
  if ((b & 0x7fffffffu) > 0x7f800000u) return (u16)((b >> 16) | 0x40u);
  return (u16)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16); }
typedef u16 T;
typedef float ACC;
#define TO_ACC(x) bf16_to_float(x)
#define FROM_ACC(x) float_to_bf16(x)
#elif SYMMEM_REDUCE_DTYPE == 11 /* float32 */
typedef float T;
typedef float ACC;
#elif SYMMEM_REDUCE_DTYPE == 12 /* float64 */
typedef double T;
typedef double ACC;
#else
#error "SYMMEM_REDUCE_DTYPE is not a symmem_dtype_t code"
#endif
#ifndef TO_ACC /* the types combined as they are */
#define TO_ACC(x) (x)
#define FROM_ACC(x) (x)
#endif

#if SYMMEM_REDUCE_OP == 0 /* sum */
#define COMBINE(a, b) ((a) + (b))
#elif SYMMEM_REDUCE_OP == 1 /* min */
#define COMBINE(a, b) ((b) < (a) ? (b) : (a))
#elif SYMMEM_REDUCE_OP == 2 /* max */
#define COMBINE(a, b) ((b) > (a) ? (b) : (a))
#elif SYMMEM_REDUCE_OP == 3 /* prod */
#define COMBINE(a, b) ((a) * (b))
#elif SYMMEM_REDUCE_OP == 4 /* and */
#define COMBINE(a, b) ((a) & (b))
#elif SYMMEM_REDUCE_OP == 5 /* or */
#define COMBINE(a, b) ((a) | (b))
#elif SYMMEM_REDUCE_OP == 6 /* xor */
#define COMBINE(a, b) ((a) ^ (b))
#else
#error "SYMMEM_REDUCE_OP is not a symmem_reduce_op_t code"
#endif
#if SYMMEM_REDUCE_OP >= 4 && SYMMEM_REDUCE_DTYPE >= 9
#error "the bitwise ops take integers and bool only"
#endif

#define VEC (16 / sizeof(T))
union pack { uint4 v; T e[16 / sizeof(T)]; };

/* One pack of each of members 0 .. n - 1 (in[p]), reduced in ACC. Loops
 * over PEs are unrolled to MAX_PES: indices known at compile time keep the
 * packs in registers. */
static __device__ __forceinline__ uint4 combine_packs(const uint4 *in, int n)
{
    pack out;
#pragma unroll
    for (int k = 0; k < (int)VEC; k++) {
        pack first; first.v = in[0];
        ACC acc = TO_ACC(first.e[k]);
#pragma unroll
        for (int p = 1; p < MAX_PES; p++)
            if (p < n) { pack more; more.v = in[p]; ACC b = TO_ACC(more.e[k]); acc = COMBINE(acc, b); }
        out.e[k] = FROM_ACC(acc);
    }
    return out.v;
}

#endif

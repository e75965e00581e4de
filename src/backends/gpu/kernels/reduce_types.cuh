/* The variant of reduce.cu that one module holds, from SYMMEM_REDUCE_DTYPE
 * and SYMMEM_REDUCE_OP (symmem.h's codes, which the gpu backend defines
 * before the source): T, the element type; ACC, the type two elements are
 * combined in; TO_ACC and FROM_ACC, the conversions between them;
 * COMBINE(a, b), the op on two ACCs. float16 and bfloat16 are stored as u16
 * (reduce.cu's conversions) and combined in float. bool takes the ops of
 * 0 and 1 (the backend passes or for sum and max, and for min and prod). */
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
typedef u16 T;
typedef float ACC;
#define TO_ACC(x) half_to_float(x)
#define FROM_ACC(x) float_to_half(x)
#elif SYMMEM_REDUCE_DTYPE == 10 /* bfloat16 */
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

#endif

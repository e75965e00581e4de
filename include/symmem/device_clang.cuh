/* The few CUDA names symmem's device library (device.cuh) uses, for clang
 * compiling it with no CUDA headers (-nocudainc -nocudalib): how
 * tools/device_bitcode.py makes device.bc, the library as LLVM bitcode,
 * which CuTe DSL kernels link through cute.extern (symmem.device.cute's own
 * engine). nvcc and NVRTC never see this file: they have the real
 * definitions. Each name maps onto the clang NVPTX builtin the CUDA headers
 * themselves use, so the code is the same instructions either way. */
#ifndef SYMMEM_DEVICE_CLANG_CUH
#define SYMMEM_DEVICE_CLANG_CUH

#define __device__ __attribute__((device))
#define __constant__ __attribute__((constant))
#define __noinline__ __attribute__((noinline))
#define __forceinline__ __inline__ __attribute__((always_inline))

#include <__clang_cuda_builtin_vars.h> /* threadIdx, blockDim: clang's own header */

/* __syncthreads is a clang builtin already. */
static __device__ __forceinline__ void __syncwarp(unsigned int mask = 0xffffffffu)
{
    __nvvm_bar_warp_sync(mask);
}
static __device__ __forceinline__ void __threadfence_system(void)
{
    __nvvm_membar_sys();
}
static __device__ __forceinline__ void __trap(void)
{
    asm volatile("trap;");
}
static __device__ __forceinline__ unsigned long long __ldg(const unsigned long long *p)
{
    return __nvvm_ldg_ull(p);
}
static __device__ __forceinline__ unsigned int __ldg(const unsigned int *p)
{
    return __nvvm_ldg_ui(p);
}
static __device__ __forceinline__ unsigned int atomicCAS(unsigned int *p, unsigned int compare,
                                                         unsigned int value)
{
    return (unsigned int)__nvvm_atom_cas_gen_i((int *)p, (int)compare, (int)value);
}
static __device__ __forceinline__ float __uint_as_float(unsigned int x)
{
    return __builtin_bit_cast(float, x);
}
struct __attribute__((aligned(8))) uint2 {
    unsigned int x, y;
};
struct __attribute__((aligned(16))) uint4 {
    unsigned int x, y, z, w;
};

#endif

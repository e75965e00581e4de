/* What every piece of symmem's GPU code that waits or fails shares, written
 * once: the memory-model primitives, the error record's writer and a
 * wait's look at the abort word and the clock. The device library
 * (device_base.cuh) and the gpu backend's own collective kernels
 * (src/backends/gpu/kernels/meet.cuh) both build on it; it reads no state
 * block and declares no __constant__, so a kernel module that includes it
 * holds only what it uses. Triton kernels cannot include it: their engine
 * writes the same record in the same steps from PTX that
 * python/symmem/device/_error_record.py makes (tests/python/
 * test_device_layout.py compares the two). */
#ifndef SYMMEM_DEVICE_PRIMITIVES_CUH
#define SYMMEM_DEVICE_PRIMITIVES_CUH

#include "device_layout.h"

typedef unsigned long long symmem_u64;

/* ---- memory-model primitives ---- */

static __device__ __forceinline__ void symmem__fence_sc_sys(void)
{
    asm volatile("fence.sc.sys;" ::: "memory");
}

static __device__ __forceinline__ void symmem__fence_acq_rel_sys(void)
{
    asm volatile("fence.acq_rel.sys;" ::: "memory");
}

/* An acquire load at system scope of a 1, 2, 4 or 8-byte word. */
#define SYMMEM__LD_ACQUIRE(bits, type, reg)                                                        \
    static __device__ __forceinline__ type symmem__ld_acquire_u##bits(symmem_u64 addr)             \
    {                                                                                              \
        type v;                                                                                    \
        asm volatile("ld.acquire.sys.global.u" #bits " %0, [%1];"                                  \
                     : "=" reg(v)                                                                  \
                     : "l"(addr)                                                                   \
                     : "memory");                                                                  \
        return v;                                                                                  \
    }
SYMMEM__LD_ACQUIRE(64, symmem_u64, "l")
SYMMEM__LD_ACQUIRE(32, unsigned int, "r")
SYMMEM__LD_ACQUIRE(16, unsigned short, "h")
SYMMEM__LD_ACQUIRE(8, unsigned short, "h") /* PTX has no 8-bit registers */

static __device__ __forceinline__ void symmem__st_relaxed_u64(symmem_u64 addr, symmem_u64 v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(addr), "l"(v) : "memory");
}

static __device__ __forceinline__ symmem_u64 symmem__globaltimer(void)
{
    symmem_u64 t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

/* ---- failing loudly ---- */

/* Leaves the error record at error (symmem_device_error_t; 0: none) for
 * the host, then traps. The first failure claims it (set 0 -> 2), writes
 * what, pe, arg, value and the call's name, fences, then sets set = 1: the
 * gpu backend's watch thread reads set with acquire (device_state.c),
 * which pairs with that fence. call: a NUL-terminated name (the record
 * keeps 31 characters), or, where padded > 0, a name NUL-padded to padded
 * bytes (the own kernels' argument block), copied whole; the record is
 * zero until written, so it holds the name NUL-padded either way. Inline,
 * in each caller's out-of-line failure (symmem__dev_fail, the own kernels'
 * fail): a constant padded keeps one of the two loops, and the kernels'
 * failure as small as their waits need (its registers are the ones they
 * keep free across the call, so they spill nothing). */
static __device__ __forceinline__ void symmem__fail_at(symmem_u64 error, const char *call,
                                                       int padded, int what, int pe, int arg,
                                                       symmem_u64 value)
{
    symmem_device_error_t *e = (symmem_device_error_t *)error;
    if (e != 0 && atomicCAS(&e->set, 0u, 2u) == 0u) {
        e->what = what;
        e->pe = pe;
        e->arg = arg;
        e->value = value;
        if (padded > 0) {
            for (int i = 0; i < padded && i < (int)sizeof(e->call); i++) e->call[i] = call[i];
        } else {
            int i = 0;
            for (; i < (int)sizeof(e->call) - 1 && call[i] != '\0'; i++) e->call[i] = call[i];
            e->call[i] = '\0';
        }
        __threadfence_system(); /* the fields before set = 1, which the host polls */
        *(volatile unsigned int *)&e->set = 1u;
        __threadfence_system();
    }
    __trap();
}

/* ---- waiting ---- */

/* What a wait that started at t0 does every SYMMEM_DEV_SPINS spins: fails,
 * naming the dead PE, once abort_word ({flag, pe}, host-mapped; 0: none)
 * says a peer died, and with a timeout, naming PE *me, once *timeout_ns
 * (0: never) passed. fail(what, pe, value) is the caller's: it leaves the
 * error record (symmem__fail_at) and traps. The timeout and the PE are
 * read where they are needed (a pointer to each field, device_layout.h's
 * types): the waits keep no more registers than their own. */
template <typename Fail>
static __device__ __forceinline__ void symmem__wait_check(const volatile unsigned int *abort_word,
                                                          const symmem_dev_u64 *timeout_ns,
                                                          const symmem_dev_i32 *me, symmem_u64 t0,
                                                          Fail fail)
{
    if (abort_word != 0 && abort_word[0] != 0u)
        fail(SYMMEM_DEV_ERR_PEER_DEAD, (int)abort_word[1], (symmem_u64)0);
    if (*timeout_ns != 0 && symmem__globaltimer() - t0 > *timeout_ns)
        fail(SYMMEM_DEV_ERR_TIMEOUT, *me, *timeout_ns);
}

#endif

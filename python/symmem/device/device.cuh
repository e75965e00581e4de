/*
 * symmem's device library: put, get, signals, waits, atomics and barriers
 * from inside CUDA kernels, on the gpu backend, when every PE's heap is
 * mapped into this GPU (one NVLink domain). CUDA C with no #include, so
 * NVRTC compiles it as is: symmem.device.numba links it into Numba kernels,
 * and CUDA C or CuPy RawKernel code includes it as <symmem/device.cuh>.
 *
 * Every function takes the address of this process's device state block
 * first (symmem.device.state_address(); it never moves while the process
 * lives) and addresses as unsigned long long, so any language can call them.
 * Names: symmem_dev_<call>[_warp|_block]; the scoped forms are called by
 * every thread of the warp or block, with the same arguments.
 *
 * Memory model (PTX's; "sys" = every GPU and the host):
 * - put and p store through the peer's mapping with plain stores. They are
 *   complete (visible on the target) after quiet, a barrier, or the signal
 *   of a put_signal; a blocking put only means the source may be reused.
 * - quiet = fence.sc.sys after the scope's barrier: every earlier store of
 *   the scope is visible system-wide before any later one of this thread.
 * - fence = fence.acq_rel.sys: earlier stores are ordered before later ones
 *   (to every PE, which is stronger than NVSHMEM asks: per PE).
 * - put_signal: copy, the scope's barrier, then the leader's fence.sc.sys
 *   and one relaxed system-scope store or add on the signal. The bar.sync
 *   puts every thread's copy before the leader's fence in causality order,
 *   so fence + signal form a release pattern over all of them.
 * - signal_wait / wait_until spin on ld.acquire.sys: each acquire pairs
 *   with the fence.sc.sys before the signal (or flag) store that it reads,
 *   so a PE that sees the signal sees the data.
 * - atomics are relaxed, at system scope (atom.sys), like NVSHMEM's.
 * - sync: fence, then a relaxed store of the epoch into every member's
 *   arrival slot; each member waits with ld.acquire.sys for every slot to
 *   reach the epoch (pairing with that fence). barrier = quiet + sync.
 * Waits look at the abort word every SYMMEM_DEV_SPINS spins and at
 * %globaltimer for SYMMEM_TIMEOUT: a dead peer or a timeout writes the
 * error record (the host prints it, naming the call and the PE) and traps,
 * so the kernel ends instead of hanging the GPU.
 */
#ifndef SYMMEM_DEVICE_CUH
#define SYMMEM_DEVICE_CUH

/* extern "C" __device__ for linking (symmem.device.numba); a header user
 * may define it as static __device__ __forceinline__ before the include. */
#ifndef SYMMEM_DEVICE_API
#define SYMMEM_DEVICE_API extern "C" __device__
#endif

typedef unsigned long long symmem_u64;

/* The device state block: src/device/state.h (layout version 2). */
typedef struct {
    symmem_u64 magic;
    unsigned int version, flags;
    int my_pe, n_pes;
    symmem_u64 heap_base, heap_size;
    const symmem_u64 *peer_base;   /* [n_pes]: PE pe's heap as mapped here */
    unsigned int abort_flag;       /* the host's copy; kernels read abort_word */
    int abort_pe;
    const volatile unsigned int *abort_word; /* {flag, pe}: set when a peer dies */
    symmem_u64 sync_base;          /* this PE's sync area (symmetric) */
    symmem_u64 timeout_ns;         /* SYMMEM_TIMEOUT; 0: none */
    symmem_u64 error;              /* the error record (host-mapped) */
} symmem_device_state;

/* What a failed device call leaves for the host before it traps. */
typedef struct {
    unsigned int set;  /* 1 once written (first failure wins) */
    int what;          /* SYMMEM_DEV_ERR_* */
    int pe;            /* the PE named: the bad or dead one */
    int arg;           /* which argument (0-based), -1 none */
    symmem_u64 value;  /* the bad value */
    char call[32];     /* the device call */
} symmem_device_error;

#define SYMMEM_DEV_ERR_BAD_PE 1
#define SYMMEM_DEV_ERR_NOT_SYMMETRIC 2
#define SYMMEM_DEV_ERR_PEER_DEAD 3
#define SYMMEM_DEV_ERR_TIMEOUT 4
#define SYMMEM_DEV_ERR_NOT_INITIALIZED 5
#define SYMMEM_DEV_ERR_NOT_CONTIGUOUS 6

#define SYMMEM_DEV_SPINS 1024
#define SYMMEM_DEV_SIGNAL_SET 9
#define SYMMEM_DEV_SIGNAL_ADD 10
/* ComparisonType */
#define SYMMEM_DEV_CMP_EQ 0
#define SYMMEM_DEV_CMP_NE 1
#define SYMMEM_DEV_CMP_GT 2
#define SYMMEM_DEV_CMP_LE 3
#define SYMMEM_DEV_CMP_LT 4
#define SYMMEM_DEV_CMP_GE 5

#define SYMMEM__ST(st) ((const symmem_device_state *)(st))

/* ---- failing loudly ---- */

static __device__ __noinline__ void symmem__dev_fail(symmem_u64 st, const char *call, int what,
                                                     int pe, int arg, symmem_u64 value)
{
    symmem_device_error *e = (symmem_device_error *)SYMMEM__ST(st)->error;
    if (e != 0 && atomicCAS(&e->set, 0u, 2u) == 0u) {
        e->what = what;
        e->pe = pe;
        e->arg = arg;
        e->value = value;
        int i = 0;
        for (; i < 31 && call[i] != '\0'; i++) e->call[i] = call[i];
        e->call[i] = '\0';
        __threadfence_system(); /* the fields before set = 1, which the host polls */
        *(volatile unsigned int *)&e->set = 1u;
        __threadfence_system();
    }
    __trap();
}

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
#define SYMMEM__LD_ACQUIRE(bits, type, reg)                                                    \
    static __device__ __forceinline__ type symmem__ld_acquire_u##bits(symmem_u64 addr)         \
    {                                                                                          \
        type v;                                                                                \
        asm volatile("ld.acquire.sys.global.u" #bits " %0, [%1];" : "=" reg(v) : "l"(addr)    \
                     : "memory");                                                              \
        return v;                                                                              \
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

/* ---- the scopes: which lane of how many, and their barrier ---- */

#define SYMMEM__THREAD 0
#define SYMMEM__WARP 1
#define SYMMEM__BLOCK 2

static __device__ __forceinline__ unsigned int symmem__lane(int scope)
{
    if (scope == SYMMEM__WARP) return threadIdx.x & 31u; /* warps are made along x first */
    if (scope == SYMMEM__BLOCK)
        return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
    return 0;
}

static __device__ __forceinline__ unsigned int symmem__lanes(int scope)
{
    if (scope == SYMMEM__WARP) return 32u;
    if (scope == SYMMEM__BLOCK) return blockDim.x * blockDim.y * blockDim.z;
    return 1u;
}

static __device__ __forceinline__ void symmem__scope_sync(int scope)
{
    if (scope == SYMMEM__WARP) __syncwarp();
    if (scope == SYMMEM__BLOCK) __syncthreads();
}

/* ---- where a PE's copy is ---- */

static __device__ __forceinline__ void symmem__check_pe(symmem_u64 st, const char *call, int pe)
{
    const symmem_device_state *s = SYMMEM__ST(st);
    if (s->magic != 0x3156454d4d4d5953ULL)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_INITIALIZED, s->my_pe, -1, 0);
    if (pe < 0 || pe >= s->n_pes)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_BAD_PE, pe, -1, (symmem_u64)(long long)pe);
}

/* Where PE pe's copy of the symmetric [addr, addr + n) is mapped here. */
static __device__ __forceinline__ symmem_u64 symmem__remote(symmem_u64 st, const char *call,
                                                            int arg, symmem_u64 addr,
                                                            symmem_u64 n, int pe)
{
    symmem__check_pe(st, call, pe);
    const symmem_device_state *s = SYMMEM__ST(st);
    symmem_u64 offset = addr - s->heap_base;
    if (addr < s->heap_base || offset > s->heap_size || n > s->heap_size - offset)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_NOT_SYMMETRIC, pe, arg, addr);
    return s->peer_base[pe] + offset;
}

/* ---- waiting ---- */

/* Called every SYMMEM_DEV_SPINS spins of a wait that started at t0. */
static __device__ __noinline__ void symmem__still_waiting(symmem_u64 st, const char *call,
                                                          symmem_u64 t0)
{
    const symmem_device_state *s = SYMMEM__ST(st);
    if (s->abort_word != 0 && s->abort_word[0] != 0u)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_PEER_DEAD, (int)s->abort_word[1], -1, 0);
    if (s->timeout_ns != 0 && symmem__globaltimer() - t0 > s->timeout_ns)
        symmem__dev_fail(st, call, SYMMEM_DEV_ERR_TIMEOUT, s->my_pe, -1, s->timeout_ns);
}

template <typename T>
static __device__ __forceinline__ int symmem__compare(T v, int cmp, T x)
{
    switch (cmp) {
    case SYMMEM_DEV_CMP_EQ: return v == x;
    case SYMMEM_DEV_CMP_NE: return v != x;
    case SYMMEM_DEV_CMP_GT: return v > x;
    case SYMMEM_DEV_CMP_LE: return v <= x;
    case SYMMEM_DEV_CMP_LT: return v < x;
    default: return v >= x;
    }
}

/* The signal's value once it compares true; ld.acquire.sys pairs with the
 * writer's fence.sc.sys before its signal store (put_signal, signal_op). */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_signal_wait(symmem_u64 st, symmem_u64 sig, int cmp,
                                                    symmem_u64 value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1;; spin++) {
        symmem_u64 v = symmem__ld_acquire_u64(sig);
        if (symmem__compare<symmem_u64>(v, cmp, value)) return v;
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "signal_wait", t0);
    }
}

/* dtype: symmem_dtype_t's integer codes 1-8 (int8 ... uint64). */
SYMMEM_DEVICE_API int symmem_dev_wait_until(symmem_u64 st, symmem_u64 ivar, int dtype, int cmp,
                                            long long value)
{
    symmem_u64 t0 = symmem__globaltimer();
    for (unsigned int spin = 1;; spin++) {
        long long v;
        switch (dtype) { /* each acquire pairs with the flag's writer's fence */
        case 1: v = (signed char)symmem__ld_acquire_u8(ivar); break;
        case 2: v = (short)symmem__ld_acquire_u16(ivar); break;
        case 3: v = (int)symmem__ld_acquire_u32(ivar); break;
        case 5: v = (unsigned char)symmem__ld_acquire_u8(ivar); break;
        case 6: v = symmem__ld_acquire_u16(ivar); break;
        case 7: v = symmem__ld_acquire_u32(ivar); break;
        default: v = (long long)symmem__ld_acquire_u64(ivar);
        }
        int unsigned_type = dtype >= 5;
        if (unsigned_type ? symmem__compare<symmem_u64>((symmem_u64)v, cmp, (symmem_u64)value)
                          : symmem__compare<long long>(v, cmp, value))
            return 0;
        if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, "wait_until", t0);
    }
}

/* ---- copies ---- */

/* This lane's share of copying n bytes, in the widest unit both addresses
 * and the length allow (16, 8, 4 bytes), then the leftover bytes. */
static __device__ __forceinline__ void symmem__copy(symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                    unsigned int lane, unsigned int lanes)
{
    symmem_u64 aligned = dst | src;
    symmem_u64 done = 0;
    if ((aligned & 15) == 0) {
        const uint4 *s = (const uint4 *)src;
        uint4 *d = (uint4 *)dst;
        symmem_u64 units = n / 16, i = lane;
        /* Eight loads in flight before their stores: a lane waits for a
         * load's latency once per eight units, not once per unit. */
        for (; i + 7ull * lanes < units; i += 8ull * lanes) {
            uint4 v[8];
#pragma unroll
            for (int k = 0; k < 8; k++) v[k] = s[i + (symmem_u64)k * lanes];
#pragma unroll
            for (int k = 0; k < 8; k++) d[i + (symmem_u64)k * lanes] = v[k];
        }
        for (; i < units; i += lanes) d[i] = s[i];
        done = units * 16;
    } else if ((aligned & 7) == 0) {
        symmem_u64 units = n / 8;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((symmem_u64 *)dst)[i] = ((const symmem_u64 *)src)[i];
        done = units * 8;
    } else if ((aligned & 3) == 0) {
        symmem_u64 units = n / 4;
        for (symmem_u64 i = lane; i < units; i += lanes)
            ((unsigned int *)dst)[i] = ((const unsigned int *)src)[i];
        done = units * 4;
    }
    for (symmem_u64 i = done + lane; i < n; i += lanes)
        ((unsigned char *)dst)[i] = ((const unsigned char *)src)[i];
}

static __device__ __forceinline__ void symmem__put(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, call, 0, dst, n, pe);
    symmem__copy(remote, src, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* the scope returns together: every copy issued */
}

static __device__ __forceinline__ void symmem__get(symmem_u64 st, const char *call, int scope,
                                                   symmem_u64 dst, symmem_u64 src, symmem_u64 n,
                                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, call, 1, src, n, pe);
    symmem__copy(dst, remote, n, symmem__lane(scope), symmem__lanes(scope));
    symmem__scope_sync(scope); /* every lane's loads done: dst is complete for the scope */
}

#define SYMMEM__COPY_API(name, fn, scope)                                                    \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,  \
                                            symmem_u64 nbytes, int pe)                      \
    {                                                                                        \
        fn(st, #name, scope, dst, src, nbytes, pe);                                          \
        return 0;                                                                            \
    }

/* nbi forms are the blocking ones: a store through the mapping is issued
 * when it returns, and quiet completes both alike. */
SYMMEM__COPY_API(put, symmem__put, SYMMEM__THREAD)
SYMMEM__COPY_API(put_warp, symmem__put, SYMMEM__WARP)
SYMMEM__COPY_API(put_block, symmem__put, SYMMEM__BLOCK)
SYMMEM__COPY_API(get, symmem__get, SYMMEM__THREAD)
SYMMEM__COPY_API(get_warp, symmem__get, SYMMEM__WARP)
SYMMEM__COPY_API(get_block, symmem__get, SYMMEM__BLOCK)

/* p of a 1, 2, 4 or 8-byte value (its bits). */
SYMMEM_DEVICE_API int symmem_dev_p(symmem_u64 st, symmem_u64 dst, symmem_u64 bits, int width,
                                   int pe)
{
    symmem_u64 remote = symmem__remote(st, "p", 0, dst, (symmem_u64)width, pe);
    switch (width) {
    case 1: *(unsigned char *)remote = (unsigned char)bits; break;
    case 2: *(unsigned short *)remote = (unsigned short)bits; break;
    case 4: *(unsigned int *)remote = (unsigned int)bits; break;
    default: *(symmem_u64 *)remote = bits;
    }
    return 0;
}

/* g: the bits of a 1, 2, 4 or 8-byte value; volatile, so a loop of g on a
 * flag reads memory every time. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_g(symmem_u64 st, symmem_u64 src, int width, int pe)
{
    symmem_u64 remote = symmem__remote(st, "g", 0, src, (symmem_u64)width, pe);
    switch (width) {
    case 1: return *(const volatile unsigned char *)remote;
    case 2: return *(const volatile unsigned short *)remote;
    case 4: return *(const volatile unsigned int *)remote;
    default: return *(const volatile symmem_u64 *)remote;
    }
}

SYMMEM_DEVICE_API int symmem_dev_quiet(symmem_u64 st)
{
    (void)st;
    symmem__fence_sc_sys();
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_fence(symmem_u64 st)
{
    (void)st;
    symmem__fence_acq_rel_sys();
    return 0;
}

/* ---- signals ---- */

/* The release that signal_wait's acquire pairs with: the fence orders every
 * earlier store of this thread (and, after the scope's barrier, of the
 * scope) before the signal update. */
static __device__ __forceinline__ void symmem__signal(symmem_u64 remote_sig, symmem_u64 value,
                                                      int op)
{
    symmem__fence_sc_sys();
    if (op == SYMMEM_DEV_SIGNAL_ADD)
        asm volatile("red.relaxed.sys.global.add.u64 [%0], %1;" ::"l"(remote_sig), "l"(value)
                     : "memory");
    else
        symmem__st_relaxed_u64(remote_sig, value);
}

SYMMEM_DEVICE_API int symmem_dev_signal_op(symmem_u64 st, symmem_u64 sig, symmem_u64 value,
                                           int op, int pe)
{
    symmem__signal(symmem__remote(st, "signal_op", 0, sig, 8, pe), value, op);
    return 0;
}

static __device__ __forceinline__ void symmem__put_signal(symmem_u64 st, const char *call,
                                                          int scope, symmem_u64 dst,
                                                          symmem_u64 src, symmem_u64 n,
                                                          symmem_u64 sig, symmem_u64 value,
                                                          int op, int pe)
{
    symmem_u64 remote_sig = symmem__remote(st, call, 2, sig, 8, pe);
    symmem__put(st, call, scope, dst, src, n, pe); /* ends with the scope's barrier */
    if (symmem__lane(scope) == 0) symmem__signal(remote_sig, value, op);
    symmem__scope_sync(scope);
}

#define SYMMEM__PUT_SIGNAL_API(name, scope)                                                   \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st, symmem_u64 dst, symmem_u64 src,   \
                                            symmem_u64 nbytes, symmem_u64 sig,               \
                                            symmem_u64 value, int op, int pe)                \
    {                                                                                         \
        symmem__put_signal(st, #name, scope, dst, src, nbytes, sig, value, op, pe);           \
        return 0;                                                                             \
    }

SYMMEM__PUT_SIGNAL_API(put_signal, SYMMEM__THREAD)
SYMMEM__PUT_SIGNAL_API(put_signal_warp, SYMMEM__WARP)
SYMMEM__PUT_SIGNAL_API(put_signal_block, SYMMEM__BLOCK)

/* ---- atomics: relaxed, system scope, on PE pe's copy ---- */

/* op: 0 fetch, 1 set, 2 swap, 3 compare_swap, 4 fetch_add, 5 fetch_and,
 * 6 fetch_or, 7 fetch_xor (inc and the non-fetch forms are these with the
 * result ignored). Returns the old value's bits. */
SYMMEM_DEVICE_API symmem_u64 symmem_dev_atomic64(symmem_u64 st, symmem_u64 dest, int op,
                                                 symmem_u64 value, symmem_u64 cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 8, pe), old = 0;
    switch (op) {
    case 0: asm volatile("ld.relaxed.sys.global.u64 %0, [%1];" : "=l"(old) : "l"(a) : "memory"); break;
    case 1: symmem__st_relaxed_u64(a, value); break;
    case 2: asm volatile("atom.relaxed.sys.global.exch.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 3: asm volatile("atom.relaxed.sys.global.cas.b64 %0, [%1], %2, %3;" : "=l"(old) : "l"(a), "l"(cond), "l"(value) : "memory"); break;
    case 4: asm volatile("atom.relaxed.sys.global.add.u64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 5: asm volatile("atom.relaxed.sys.global.and.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    case 6: asm volatile("atom.relaxed.sys.global.or.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory"); break;
    default: asm volatile("atom.relaxed.sys.global.xor.b64 %0, [%1], %2;" : "=l"(old) : "l"(a), "l"(value) : "memory");
    }
    return old;
}

SYMMEM_DEVICE_API unsigned int symmem_dev_atomic32(symmem_u64 st, symmem_u64 dest, int op,
                                                   unsigned int value, unsigned int cond, int pe)
{
    symmem_u64 a = symmem__remote(st, "atomic", 0, dest, 4, pe);
    unsigned int old = 0;
    switch (op) {
    case 0: asm volatile("ld.relaxed.sys.global.u32 %0, [%1];" : "=r"(old) : "l"(a) : "memory"); break;
    case 1: asm volatile("st.relaxed.sys.global.u32 [%0], %1;" ::"l"(a), "r"(value) : "memory"); break;
    case 2: asm volatile("atom.relaxed.sys.global.exch.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 3: asm volatile("atom.relaxed.sys.global.cas.b32 %0, [%1], %2, %3;" : "=r"(old) : "l"(a), "r"(cond), "r"(value) : "memory"); break;
    case 4: asm volatile("atom.relaxed.sys.global.add.u32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 5: asm volatile("atom.relaxed.sys.global.and.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    case 6: asm volatile("atom.relaxed.sys.global.or.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory"); break;
    default: asm volatile("atom.relaxed.sys.global.xor.b32 %0, [%1], %2;" : "=r"(old) : "l"(a), "r"(value) : "memory");
    }
    return old;
}

/* ---- sync and barrier over all PEs ---- */

/* The sync area (sync_base, symmetric): word 0 is how many syncs this PE
 * has finished (written only by this PE's syncing thread), word 1 + p is
 * the last epoch PE p announced here. */
static __device__ __noinline__ void symmem__sync_all(symmem_u64 st, const char *call)
{
    const symmem_device_state *s = SYMMEM__ST(st);
    symmem__check_pe(st, call, s->my_pe);
    symmem_u64 *mine = (symmem_u64 *)s->sync_base;
    symmem_u64 epoch = mine[0] + 1;
    mine[0] = epoch;
    symmem__fence_acq_rel_sys(); /* this PE's earlier stores before its arrival */
    symmem_u64 slot = s->sync_base + 8ull * (symmem_u64)(1 + s->my_pe);
    for (int pe = 0; pe < s->n_pes; pe++)
        symmem__st_relaxed_u64(s->peer_base[pe] + (slot - s->heap_base), epoch);
    symmem_u64 t0 = symmem__globaltimer();
    for (int pe = 0; pe < s->n_pes; pe++) {
        symmem_u64 at = s->sync_base + 8ull * (symmem_u64)(1 + pe);
        /* acquire: pairs with PE pe's fence before its arrival store */
        for (unsigned int spin = 1; symmem__ld_acquire_u64(at) < epoch; spin++)
            if (spin % SYMMEM_DEV_SPINS == 0) symmem__still_waiting(st, call, t0);
    }
}

static __device__ __forceinline__ void symmem__barrier_all(symmem_u64 st, const char *call,
                                                           int scope, int quiet)
{
    symmem__scope_sync(scope); /* every lane's stores before the leader's fence */
    if (symmem__lane(scope) == 0) {
        if (quiet) symmem__fence_sc_sys();
        symmem__sync_all(st, call);
    }
    symmem__scope_sync(scope);
}

#define SYMMEM__SYNC_API(name, scope, quiet)                       \
    SYMMEM_DEVICE_API int symmem_dev_##name(symmem_u64 st)         \
    {                                                              \
        symmem__barrier_all(st, #name, scope, quiet);              \
        return 0;                                                  \
    }

SYMMEM__SYNC_API(barrier_all, SYMMEM__THREAD, 1)
SYMMEM__SYNC_API(barrier_all_warp, SYMMEM__WARP, 1)
SYMMEM__SYNC_API(barrier_all_block, SYMMEM__BLOCK, 1)
SYMMEM__SYNC_API(sync_all, SYMMEM__THREAD, 0)
SYMMEM__SYNC_API(sync_all_warp, SYMMEM__WARP, 0)
SYMMEM__SYNC_API(sync_all_block, SYMMEM__BLOCK, 0)

/* For language bindings that find a strided view only at run time. */
SYMMEM_DEVICE_API int symmem_dev_not_contiguous(symmem_u64 st, int arg, symmem_u64 stride)
{
    symmem__dev_fail(st, "a device copy", SYMMEM_DEV_ERR_NOT_CONTIGUOUS,
                     SYMMEM__ST(st)->my_pe, arg, stride);
    return 0;
}

SYMMEM_DEVICE_API int symmem_dev_my_pe(symmem_u64 st) { return SYMMEM__ST(st)->my_pe; }
SYMMEM_DEVICE_API int symmem_dev_n_pes(symmem_u64 st) { return SYMMEM__ST(st)->n_pes; }

#endif
